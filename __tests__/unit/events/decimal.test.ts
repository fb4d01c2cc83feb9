import { Utils } from "@arkecosystem/crypto";

import { compareDecimals, toDecimal } from "../../../src/events/decimal";

describe("toDecimal", () => {
    it.each<[unknown, string | undefined]>([
        [0, "0e0"],
        [-12.5, "-125e1"],
        [1e21, "1000000000000000000000e0"],
        ["18446744073709551617", "18446744073709551617e0"],
        ["  7 ", "7e0"],
        ["1.50", "150e2"],
        ["2E3", "2000e0"],
        [10n, "10e0"],
        [Utils.BigNumber.make("123456789012345678901234567890"), "123456789012345678901234567890e0"],
        ["", undefined],
        ["0x10", undefined],
        ["1e999", undefined],
        [Number.NaN, undefined],
        [Number.POSITIVE_INFINITY, undefined],
        [true, undefined],
        [null, undefined],
        [{}, undefined],
        [[1], undefined],
    ])("reads %p", (input, expected) => {
        const decimal = toDecimal(input);
        expect(decimal ? `${decimal.digits}e${decimal.scale}` : undefined).toBe(expected);
    });

    it("orders values exactly beyond the precision of a double", () => {
        const a = toDecimal("9007199254740993")!;
        const b = toDecimal(9007199254740992)!;

        expect(compareDecimals(a, b)).toBe(1);
        expect(compareDecimals(b, a)).toBe(-1);
        expect(compareDecimals(toDecimal("1.10")!, toDecimal("1.1")!)).toBe(0);
    });
});
