// `npm run bank-sim`: the bank gateway simulator as its own process (see docs/rail-protocol.md).
import { parseFaults, startBankSim } from './sim.js';

const port = Number(process.env.BANK_SIM_PORT ?? 4100);
const secret = process.env.BANK_SIM_SECRET;
if (!secret) {
  process.stderr.write('bank-sim: BANK_SIM_SECRET is required (the same value as TOLOV_LIVE_RAIL_SECRET)\n');
  process.exit(1);
}
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write('bank-sim: BANK_SIM_PORT must be a port number\n');
  process.exit(1);
}
const faults = parseFaults(process.env.BANK_SIM_FAULTS ? JSON.parse(process.env.BANK_SIM_FAULTS) : {});
const sim = await startBankSim({ dataDir: process.env.BANK_SIM_DATA_DIR ?? './bank-sim-data', secret, port, faults });
// As the service does: only a new process recovers a lost database.
void sim.db.lost.then((error) => {
  process.stderr.write(`bank-sim: the database is lost (${error.message}): exiting so that a restart recovers it\n`);
  process.exit(1);
});
process.stdout.write(`bank-sim listening on ${sim.url}\n`);
const stop = () => void sim.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
