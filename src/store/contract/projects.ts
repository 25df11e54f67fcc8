/** Projects (tracing sessions): created by the runs stored in them, or empty by name. */

export interface Project {
  name: string;
  created_at: string;
}

export interface ProjectStore {
  /** A project, created empty unless it exists (creating a deployment creates the project of its name). */
  ensureProject(name: string): Promise<void>;
  projectExists(name: string): Promise<boolean>;
  /** Every project, newest first (then by name). */
  listProjects(): Promise<Project[]>;
  /** Delete a project and its runs (with their attachments and pieces); resolves to the number of runs removed. */
  deleteProject(name: string): Promise<number>;
}
