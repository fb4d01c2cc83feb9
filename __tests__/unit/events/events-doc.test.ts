import { readFileSync } from "fs";

import { EVENT_NAMES, EXCLUDED_EVENTS } from "../../../src/events/catalogue";
import { EVENTS_DOC, readSamples, renderEventsDoc } from "../../../scripts/events-doc";

describe("docs/events.md", () => {
    it("is what npm run docs writes from the catalogue and the recorded node samples", () => {
        // On failure: run `npm run docs` and commit docs/events.md.
        expect(readFileSync(EVENTS_DOC, "utf8")).toBe(renderEventsDoc(readSamples()));
    });

    it("covers every event the recorded node dispatched: subscribable, or excluded with a reason", () => {
        const excluded = new Set(EXCLUDED_EVENTS.map((entry) => entry.name));
        const unaccounted = Object.keys(readSamples()).filter((name) => !EVENT_NAMES.has(name) && !excluded.has(name));
        expect(unaccounted).toEqual([]);
        expect([...excluded].filter((name) => EVENT_NAMES.has(name))).toEqual([]);
        expect(EXCLUDED_EVENTS.every((entry) => entry.reason.length > 20)).toBe(true);
    });

    it("shows wallet.vote's delegate as a signed public key", () => {
        expect(readFileSync(EVENTS_DOC, "utf8")).toMatch(/"delegate": "\+0[23][0-9a-f]{64}"/);
    });
});
