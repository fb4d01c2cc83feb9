import { Utils } from "@arkecosystem/crypto";
import Joi from "joi";

import { keptValidation } from "../../../src/wallets/kept-validation";
import { MAX_KEPT_QUERY_CHARS } from "../../../src/wallets/pagination-memo";
import { turnCounter } from "../../support/event-loop";

/** A listing-like schema that counts the values it validated. */
const countingSchema = (): { schema: Joi.ObjectSchema; validated: () => number } => {
    let count = 0;
    const schema = Joi.object({
        balance: Joi.custom((value: string) => Utils.BigNumber.make(value)),
        address: Joi.array().items(Joi.string()),
        attributes: Joi.object({ delegate: Joi.object({ username: Joi.string() }) }),
        page: Joi.number().integer().positive().default(1),
        limit: Joi.number().integer().min(1).default(100).max(Joi.ref("$configuration.limit")),
    }).custom((value: unknown) => {
        count++;
        return value;
    });
    return { schema, validated: () => count };
};

const options = { context: { configuration: { limit: 100 } } };

describe("a listing's query validated once for each query as written", () => {
    it("validates a query once and answers it again with the same value", async () => {
        const { schema, validated } = countingSchema();
        const validate = keptValidation(schema, 8);
        const query = { balance: "1000000000000", address: ["a", "b"], attributes: { delegate: { username: "x" } } };

        const first = await validate(query, options);
        const second = await validate({ ...query }, options);

        expect(second).toEqual(first);
        expect(first).toEqual({ ...query, balance: Utils.BigNumber.make("1000000000000"), page: 1, limit: 100 });
        expect((second as { balance: unknown }).balance).toBeInstanceOf(Utils.BigNumber);
        expect(validated()).toBe(1);
    });

    it("gives each request a value of its own: a change to one is never seen by the next", async () => {
        const { schema } = countingSchema();
        const validate = keptValidation(schema, 8);
        const query = { address: ["a"], attributes: { delegate: { username: "x" } } };

        const first = (await validate(query, options)) as {
            page: number;
            address: string[];
            attributes: { delegate: { username: string } };
        };
        first.page = 7;
        first.address.push("changed");
        first.attributes.delegate.username = "changed";

        expect(await validate(query, options)).toEqual({ ...query, page: 1, limit: 100 });
    });

    it("validates a failing query every time, with Joi's own error", async () => {
        const { schema, validated } = countingSchema();
        const validate = keptValidation(schema, 8);
        const direct = schema.validate({ limit: "101" }, options).error?.message;

        await expect(validate({ limit: "101" }, options)).rejects.toThrow(direct);
        await expect(validate({ limit: "101" }, options)).rejects.toThrow(
            '"limit" must be less than or equal to ref:global:configuration.limit',
        );
        expect(validated()).toBe(0);
        expect(await validate({ limit: "100" }, options)).toEqual({ page: 1, limit: 100 });
    });

    it("keeps at most its capacity, the oldest going first", async () => {
        const { schema, validated } = countingSchema();
        const validate = keptValidation(schema, 2);

        for (const page of ["1", "2", "3", "3", "1"]) {
            await validate({ page }, options);
        }

        expect(validated()).toBe(4); // 1, 2, 3 validated, 3 kept, 1 dropped and validated again
    });

    it("validates a long query every time, and keeps nothing of it", async () => {
        const { schema, validated } = countingSchema();
        const validate = keptValidation(schema, 8);
        const query = { address: ["x".repeat(MAX_KEPT_QUERY_CHARS)] };

        await validate(query, options);
        expect(await validate(query, options)).toEqual({ ...query, page: 1, limit: 100 });
        expect(validated()).toBe(2);
    });

    it("validates new queries asked together one turn of the event loop apart, and answers a kept one in the turn it asked", async () => {
        const turnsOfValidations: number[] = [];
        const turns = turnCounter();
        const schema = Joi.object({ page: Joi.number() }).custom((value: unknown) => {
            turnsOfValidations.push(turns.turn);
            return value;
        });
        const validate = keptValidation(schema, 8);

        await Promise.all(["1", "2", "3"].map((page) => validate({ page }, options)));
        const turnAsked = turns.turn;
        await validate({ page: "2" }, options);
        const turnAnswered = turns.turn;
        turns.stop();

        expect(new Set(turnsOfValidations).size).toBe(3);
        expect(turnAnswered).toBe(turnAsked);
    });
});
