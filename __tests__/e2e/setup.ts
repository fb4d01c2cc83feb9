// A real node boots in a child process; its first block comes 8 s later.
jest.setTimeout(300_000);
