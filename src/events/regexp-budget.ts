import { AST, RegExpParser } from "@eslint-community/regexpp";

/**
 * RE2 runs in time linear in the input, but the factor grows with the compiled program: a large
 * program no longer fits RE2's DFA and falls back to a simulation that costs the program's size
 * per input byte (`.{600}z` took 21 ms on 4 KB, `(.{0,200}){0,5}z` 780 ms on 64 KB). This estimates
 * the size of the program RE2 compiles for a pattern, counted repetitions expanded, so that
 * patterns over a budget are refused before they are compiled.
 */
export type RegexpCost = { ok: true; size: number } | { ok: false; reason: string };

// Instructions RE2 emits, roughly, for a class in UTF-8: multi-byte ranges cost several.
const SET_SIZE: Record<AST.CharacterSet["kind"], number> = { any: 8, digit: 1, space: 6, word: 4, property: 32 };
const NEGATED_CLASS_SIZE = 8;

const utf8Size = (codePoint: number): number =>
    codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;

class Refused extends Error {}

type Sized =
    | AST.Alternative
    | AST.Element
    | AST.Pattern
    | AST.CharacterClassElement
    | AST.StringAlternative
    | AST.ClassStringDisjunction;

const sizeOfAlternatives = (alternatives: readonly Sized[]): number =>
    alternatives.reduce((total, alternative) => total + sizeOf(alternative), 0) + alternatives.length - 1;

const sizeOfAll = (elements: readonly Sized[]): number =>
    elements.reduce((total, element) => total + sizeOf(element), 0);

const sizeOf = (node: Sized): number => {
    switch (node.type) {
        case "Pattern":
        case "Group":
            return sizeOfAlternatives(node.alternatives);
        case "CapturingGroup":
            return sizeOfAlternatives(node.alternatives) + 2;
        case "Alternative":
        case "StringAlternative":
            return sizeOfAll(node.elements);
        case "Character":
            return utf8Size(node.value);
        case "CharacterSet":
            return SET_SIZE[node.kind];
        case "CharacterClassRange":
            return utf8Size(node.max.value);
        case "CharacterClass":
            return 1 + (node.negate ? NEGATED_CLASS_SIZE : 0) + sizeOfAll(node.elements);
        case "ClassStringDisjunction":
            return sizeOfAlternatives(node.alternatives);
        case "Quantifier": {
            // RE2 expands x{n,m} into m copies (n + 1 when unbounded).
            const copies = Number.isFinite(node.max) ? node.max : node.min + 1;
            return sizeOf(node.element) * Math.max(1, copies) + 1;
        }
        case "Assertion":
            if (node.kind === "lookahead" || node.kind === "lookbehind") {
                throw new Refused("lookarounds need backtracking");
            }
            return 1;
        case "Backreference":
            throw new Refused("backreferences need backtracking");
        default:
            throw new Refused(`${node.type} is not supported`);
    }
};

/** The estimated program size of an ECMAScript pattern, or why it cannot be run safely. */
export const estimateRegexpCost = (source: string): RegexpCost => {
    let pattern: AST.Pattern;
    try {
        pattern = new RegExpParser({ ecmaVersion: 2022 }).parsePattern(source, 0, source.length, { unicode: false });
    } catch (error) {
        return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
    try {
        return { ok: true, size: sizeOf(pattern) };
    } catch (error) {
        if (error instanceof Refused) {
            return { ok: false, reason: error.message };
        }
        throw error;
    }
};
