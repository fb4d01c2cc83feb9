const project = (name, extra = {}) => ({
    displayName: name,
    testEnvironment: "node",
    // Tests compile to CommonJS, as the build does; ts-jest warns on every file for node16 modules.
    transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: { module: "commonjs", moduleResolution: "node10" } }] },
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
