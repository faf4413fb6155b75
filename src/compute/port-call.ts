import { MessageChannel, type MessagePort } from 'node:worker_threads';

/**
 * A call from a worker task back to the main thread over a MessagePort sent with the task: how a
 * worker engine gets what only the main thread may do for it (the remote images the operation
 * fetches under src/inputs/remote-inputs.ts). Answers are structured clones; an error crosses as its
 * message only (the handler answers with values, not errors, for anything the caller should see).
 */
type Message<Q> = { id: number; request: Q };
type Reply<A> = { id: number; ok: true; value: A } | { id: number; ok: false; message: string };

/** Main thread: answers each request on the returned port with `handler`, until `close`. */
export function servePort<Q, A>(handler: (request: Q) => Promise<A>): { port: MessagePort; close(): void } {
  const { port1, port2 } = new MessageChannel();
  port1.on('message', ({ id, request }: Message<Q>) => {
    handler(request).then(
      (value) => port1.postMessage({ id, ok: true, value } satisfies Reply<A>),
      (err: unknown) => port1.postMessage({ id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies Reply<A>),
    );
  });
  return { port: port2, close: () => port1.close() };
}

/** Worker thread: the function that asks the main thread over `port`. `close` when the task ends. */
export function portCaller<Q, A>(port: MessagePort): { call(request: Q): Promise<A>; close(): void } {
  let next = 0;
  const pending = new Map<number, { resolve(value: A): void; reject(err: Error): void }>();
  port.on('message', (reply: Reply<A>) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(new Error(reply.message));
  });
  port.on('close', () => {
    for (const waiting of pending.values()) waiting.reject(new Error('the main thread closed the port'));
    pending.clear();
  });
  return {
    call: (request) =>
      new Promise<A>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        port.postMessage({ id, request } satisfies Message<Q>);
      }),
    close: () => port.close(),
  };
}
