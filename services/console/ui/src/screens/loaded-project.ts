/** A project as its screen loaded it, shared by its tabs (the definition editor, the revisions). */
export interface LoadedProject {
  name: string;
  revision: number;
  definition: Record<string, unknown>;
  /** The ETag of what was loaded: sent back as If-Match. */
  etag: string;
}
