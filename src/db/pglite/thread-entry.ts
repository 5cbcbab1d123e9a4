// The embedded engine on a thread of its own (started by `thread.ts`). It only executes the protocol bytes the
// service's thread sends, one message at a time in the order received, and answers the backend's bytes; parsing,
// statements and transactions are the session's (`session.ts`) on the other side.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { createPglite } from './engine.js';
import { ANSWER_BYTES_MAX, ANSWER_HEADER_BYTES, SPIN_MS, WAITED, type EngineAnswer, type EngineRequest, type EngineStart } from './thread.js';

const port = parentPort!;
const { dataDir, loadDataDir, answers } = workerData as EngineStart & { answers: SharedArrayBuffer };
const header = new Int32Array(answers, 0, 3);

const describe = (error: unknown) => String((error as Error)?.stack ?? error);

/** Writes the answer to waited exchange `id`, which the other thread is blocked on, into the shared memory, and wakes it. */
function answerWaited(id: number, outcome: (typeof WAITED)[keyof typeof WAITED], bytes: Uint8Array): void {
  if (bytes.length > ANSWER_BYTES_MAX) {
    outcome = WAITED.tooLarge;
    bytes = new TextEncoder().encode(`an answer of ${bytes.length} bytes is over the limit of ${ANSWER_BYTES_MAX} for a statement in a transaction`);
  }
  if (answers.byteLength < ANSWER_HEADER_BYTES + bytes.length) answers.grow(ANSWER_HEADER_BYTES + bytes.length);
  new Uint8Array(answers, ANSWER_HEADER_BYTES, bytes.length).set(bytes);
  header[1] = outcome;
  header[2] = bytes.length;
  Atomics.store(header, 0, id);
  Atomics.notify(header, 0);
}

try {
  const lite = await createPglite(dataDir, loadDataDir);
  let stopping = false;
  // A database error is part of the backend's answer; a throw is the engine's own failure (a WebAssembly abort, an
  // exit), after which its state is unknown: it runs nothing more, and the other side gives it up.
  let failure: string | null = null;
  const handle = (request: EngineRequest) => {
    if (request.kind === 'stop') {
      stopping = true;
      void lite.close().then(() => port.close());
      return;
    }
    let bytes: Uint8Array | null = null;
    if (failure === null) {
      try {
        // Runs whole before the next message is read (the engine is synchronous): requests execute in the order sent.
        // No syncToFs: PGlite's Node and memory file systems write through, and have nothing to sync.
        bytes = lite.execProtocolRawSync(request.message);
      } catch (error) {
        failure = describe(error);
      }
    }
    if (bytes === null) {
      if (request.waited) answerWaited(request.id, WAITED.failed, new TextEncoder().encode(failure!));
      else port.postMessage({ kind: 'failed', id: request.id, message: failure! } satisfies EngineAnswer);
    } else if (request.waited) answerWaited(request.id, WAITED.answer, bytes);
    else port.postMessage({ kind: 'answer', id: request.id, answer: bytes } satisfies EngineAnswer, [bytes.buffer as ArrayBuffer]);
  };
  port.on('message', (request: EngineRequest) => {
    handle(request);
    // The next statement usually follows at once (a transaction's next, or another request's): look for it a little
    // before going back to sleep.
    let since = performance.now();
    while (!stopping && performance.now() - since < SPIN_MS) {
      const next = receiveMessageOnPort(port);
      if (!next) continue;
      handle(next.message as EngineRequest);
      since = performance.now();
    }
  });
  port.postMessage({ kind: 'ready' } satisfies EngineAnswer);
} catch (error) {
  port.postMessage({ kind: 'failed', id: 0, message: describe(error) } satisfies EngineAnswer);
}
