import eslint from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
    { ignores: ["dist/", "build/", "coverage/", "node_modules/"] },
    eslint.configs.recommended,
    ...tseslint.configs.recommended,
    prettier,
    {
        files: ["**/*.js"],
        languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly" } },
    },
    {
        // Thread scripts shipped as they are: CommonJS, Node's globals.
        files: ["threads/*.cjs"],
        languageOptions: { sourceType: "commonjs", globals: { require: "readonly", process: "readonly" } },
        rules: { "@typescript-eslint/no-require-imports": "off" },
    },
    {
        rules: {
            "@typescript-eslint/no-explicit-any": "error",
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
        },
    },
);
