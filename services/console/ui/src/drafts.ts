/**
 * Unsaved definition text, one draft per project (and a row's unsaved edits, one draft per
 * row: explorer/RowDetail.tsx), kept in sessionStorage (like the
 * admin key: gone with the tab) so that an expired session, a 401 or a reload loses
 * nothing. A draft remembers the ETag of the revision it was written against: applied
 * later, it is sent with that `If-Match`, so a change stored meanwhile (or a project
 * deleted and created again) is a conflict the editor explains, never overwritten.
 * Signing out on purpose forgets every draft.
 */

export interface Draft {
  /** The ETag of the revision the text was edited from (none: a new project). */
  baseEtag: string | undefined;
  /** That revision's number, to name it to the user. */
  baseRevision: number | undefined;
  text: string;
}

const PREFIX = "tessera.console.draft:";

/** Where a draft belongs: the account and the project (empty: the new-project screen). */
export function draftPlace(account: string, project: string | undefined): string {
  return `${PREFIX}${account}/${project ?? ""}`;
}

/** Where a row's draft belongs: the row's path, which names account, project, version and row. */
export function rowDraftPlace(rowPath: string): string {
  return `${PREFIX}row:${rowPath}`;
}

export function readDraft<T = Draft>(place: string): T | undefined {
  try {
    const text = window.sessionStorage.getItem(place);
    return text ? (JSON.parse(text) as T) : undefined;
  } catch {
    return undefined;
  }
}

export function writeDraft<T = Draft>(place: string, draft: T | undefined): void {
  try {
    if (draft === undefined) window.sessionStorage.removeItem(place);
    else window.sessionStorage.setItem(place, JSON.stringify(draft));
  } catch {
    // A full or disabled storage: the draft lives only as long as the page.
  }
}

export function forgetAllDrafts(): void {
  const places: string[] = [];
  for (let i = 0; i < window.sessionStorage.length; i++) {
    const place = window.sessionStorage.key(i);
    if (place?.startsWith(PREFIX)) places.push(place);
  }
  for (const place of places) window.sessionStorage.removeItem(place);
}
