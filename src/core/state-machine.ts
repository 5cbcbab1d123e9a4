// A state machine as a table: which trigger moves an object from which statuses to which. A store writes every status
// change from its table (`SET status = <to> … WHERE status = ANY(<from>)`), so that a move the table does not allow
// changes nothing, and whoever races for the object, the database lets one move win.

export interface Move<Status extends string, Trigger extends string> {
  on: Trigger;
  from: readonly Status[];
  to: Status;
}

export class StateMachine<Status extends string, Trigger extends string> {
  constructor(
    /** What the machine moves, for the errors of a trigger it has no row for. */
    private readonly name: string,
    private readonly moves: readonly Move<Status, Trigger>[],
  ) {}

  /** The table's row for `on`; every trigger the code raises has one. */
  move(on: Trigger): Move<Status, Trigger> {
    const move = this.moves.find((row) => row.on === on);
    if (!move) throw new Error(`the ${this.name} state machine has no move on ${on}`);
    return move;
  }
}
