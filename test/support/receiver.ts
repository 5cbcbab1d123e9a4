import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Behaviour = 'ok' | 'fail' | 'hang' | 'redirect';

/** A webhook receiver on 127.0.0.1 that records every request; its answer is chosen per test. */
export interface Receiver {
  url: string;
  received: Received[];
  behaviour: Behaviour;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], behaviour: 'ok', close: async () => {} };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      receiver.received.push({ path: request.url ?? '', headers: request.headers, body });
      if (receiver.behaviour === 'hang') return;
      if (receiver.behaviour === 'redirect') return response.writeHead(302, { location: '/moved' }).end();
      response.writeHead(receiver.behaviour === 'ok' ? 200 : 500).end(receiver.behaviour === 'ok' ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
