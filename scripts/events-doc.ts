import { readFileSync, writeFileSync } from "fs";
import { resolve } from "path";

import { EVENT_CATALOGUE, EXCLUDED_EVENTS } from "../src/events/catalogue";
import { serializePayload } from "../src/events/serialize-payload";

/**
 * docs/events.md, written from the payloads a real ARK Core 3.9.1 node dispatched
 * (__tests__/fixtures/node-samples/events.json): `npm run docs` writes it, a unit test fails
 * when the file and the catalogue or the samples drift apart.
 */
export const EVENTS_DOC = resolve(__dirname, "../docs/events.md");
export const SAMPLES = resolve(__dirname, "../__tests__/fixtures/node-samples/events.json");

interface RecordedEvent {
    count: number;
    samples: Record<string, unknown>;
}

/** What the samples cannot show: facts a receiver needs, checked against ARK Core 3.9.1's source. */
const NOTES: Record<string, string> = {
    "wallet.vote": "`delegate` is the voted delegate's public key prefixed with `+`, as in the vote's `asset.votes`.",
    "wallet.unvote": "`delegate` is the public key of the delegate no longer voted for, prefixed with `-`.",
    "transaction.applied":
        "The transaction's data; `amount` and `fee` are strings of satoshi, `blockId` and `blockHeight` name its block. The shape varies with `typeGroup`/`type`: one sample per type recorded.",
    "transaction.reverted": "The reverted transaction's data, shaped as `transaction.applied`.",
    "transaction.forged": "The transaction's data, shaped as `transaction.applied`.",
    "transaction.expired": "The expired transaction's data, shaped as `transaction.pool.added`.",
    "block.reverted": "The reverted block's data, shaped as `block.applied`.",
    "delegate.registered": "The delegate registration transaction's data, shaped as `transaction.applied`.",
    "delegate.resigned": "The delegate resignation transaction's data, shaped as `transaction.applied`.",
};

const MAX_ARRAY_ITEMS = 2;
const MAX_EXAMPLE_CHARS = 2_500;

/** A sample made short enough to read: long arrays cut to their first items. */
const shorten = (value: unknown): unknown => {
    if (Array.isArray(value)) {
        const kept = value.slice(0, MAX_ARRAY_ITEMS).map(shorten);
        return value.length > MAX_ARRAY_ITEMS ? [...kept, `… ${value.length - MAX_ARRAY_ITEMS} more`] : kept;
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shorten(item)]));
    }
    return value;
};

const isUnserialisable = (sample: unknown): boolean =>
    typeof sample === "string" && sample.startsWith("<unserializable");

const example = (sample: unknown): string => {
    const text = JSON.stringify(JSON.parse(serializePayload(shorten(sample))), null, 2);
    return text.length > MAX_EXAMPLE_CHARS ? `${text.slice(0, MAX_EXAMPLE_CHARS)}\n… (cut)` : text;
};

const payloadSection = (name: string, recorded: RecordedEvent | undefined): string[] => {
    const lines: string[] = [];
    if (NOTES[name]) {
        lines.push(NOTES[name], "");
    }
    if (!recorded) {
        lines.push("Not dispatched during the recorded run, so no sample is shown.", "");
        return lines;
    }
    for (const [variant, sample] of Object.entries(recorded.samples)) {
        if (isUnserialisable(sample)) {
            lines.push("No payload: `data` is `null`.", "");
            continue;
        }
        lines.push(
            variant === "default" ? "`data`:" : `\`data\` for ${variant}:`,
            "",
            "```json",
            example(sample),
            "```",
            "",
        );
    }
    return lines;
};

export const renderEventsDoc = (recordedEvents: Record<string, RecordedEvent>): string => {
    const lines = [
        "# Events and their payloads",
        "",
        "<!-- Written by `npm run docs` from __tests__/fixtures/node-samples/events.json; a test fails when they drift. -->",
        "",
        'A delivery\'s body is `{ "timestamp": <ms>, "event": "<name>", "data": <payload> }`. The',
        "payloads below were dispatched by a real ARK Core 3.9.1 node (a local unitnet forging blocks",
        "with transfers, votes and an HTLC lock), written as deliveries carry them: big numbers as",
        "strings, buffers as hex, a missing payload as `null`. Long arrays are cut to their first items.",
        "",
        "`emitted` (as `GET /api/webhooks/events` answers it) says whether a 3.9.1 node dispatches the",
        "event at all; a webhook may listen for any event of the catalogue.",
        "",
        "| event | emitted | fires when |",
        "|---|---|---|",
        ...EVENT_CATALOGUE.map(
            (entry) =>
                `| [\`${entry.name}\`](#${entry.name.replace(/\./g, "").toLowerCase()}) | ${entry.emitted ? "yes" : "no"} | ${entry.description} |`,
        ),
        "",
        "## Not subscribable",
        "",
        ...EXCLUDED_EVENTS.map((entry) => `- \`${entry.name}\`: ${entry.reason}`),
        "",
    ];
    for (const entry of EVENT_CATALOGUE) {
        lines.push(`## ${entry.name}`, "", `${entry.description}.${entry.note ? ` ${entry.note}` : ""}`, "");
        lines.push(...payloadSection(entry.name, recordedEvents[entry.name]));
    }
    return `${lines.join("\n").trimEnd()}\n`;
};

export const readSamples = (): Record<string, RecordedEvent> => JSON.parse(readFileSync(SAMPLES, "utf8"));

if (require.main === module) {
    writeFileSync(EVENTS_DOC, renderEventsDoc(readSamples()));
    console.log(`wrote ${EVENTS_DOC}`);
}
