/** `expiration` on the wire: UTC `YYYY-MM-DDTHH:mm:ss.SSS`, no zone (docs/contract.md §1). */
export function formatExpiration(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 23);
}
