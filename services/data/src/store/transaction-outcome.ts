/**
 * What a MongoDB transaction that failed answers, once the driver gave up retrying it
 * (`withTransaction` runs the callback again on a TransientTransactionError and commits again
 * on an UnknownTransactionCommitResult, for up to two minutes):
 *  - an API error (a conflict, a duplicate key) aborted the transaction: it is the answer;
 *  - TransientTransactionError: the transaction was aborted, nothing was written: 503;
 *  - UnknownTransactionCommitResult: the commit was sent but never confirmed, so the writes may
 *    have been applied: 503 saying so (the client reads before trying again);
 *  - anything else: as thrown (unit-of-work.ts then maps store outages to 503, mongo-errors.ts).
 */
import { MongoError } from "mongodb";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";

export function transactionFailure(err: unknown): unknown {
  if (err instanceof ApiError || !(err instanceof MongoError)) return err;
  if (err.hasErrorLabel("UnknownTransactionCommitResult")) {
    return new ApiError(
      503,
      ErrorCode.unavailable,
      "A data store did not confirm the commit: the change may or may not have been applied; read it before trying again",
      { cause: err },
    );
  }
  if (err.hasErrorLabel("TransientTransactionError")) return errors.unavailable("A data store", err);
  return err;
}
