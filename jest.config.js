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
        project("integration"),
        // The real node: jest's globals must exist before core-test-framework loads.
        project("e2e", { setupFilesAfterEnv: ["<rootDir>/__tests__/e2e/setup.ts"] }),
    ],
};
