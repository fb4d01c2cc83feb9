// Real servers, threads and processes beside each other: see jest.config.js.
jest.setTimeout(60_000);
