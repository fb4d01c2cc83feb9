const project = (name, extra = {}) => ({
    displayName: name,
    preset: "ts-jest",
    testEnvironment: "node",
    testMatch: [`<rootDir>/__tests__/${name}/**/*.test.ts`],
    ...extra,
});

/** @type {import("jest").Config} */
module.exports = {
    projects: [
        project("unit"),
        // Real servers, threads and processes, run beside each other on a small machine: a test that
        // waits on its own conditions (each with its own limit) must not be cut at jest's 5 s first.
        // (testTimeout is not a project option: jest ignores it there, so the setup file sets it.)
        project("integration", { setupFilesAfterEnv: ["<rootDir>/__tests__/integration/setup.ts"] }),
        // The real node: jest's globals must exist before core-test-framework loads.
        project("e2e", { setupFilesAfterEnv: ["<rootDir>/__tests__/e2e/setup.ts"] }),
    ],
};
