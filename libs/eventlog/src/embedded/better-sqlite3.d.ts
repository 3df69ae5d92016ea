// The part of better-sqlite3's API this library uses (the package ships no types and
// @types/better-sqlite3 is not a dependency of the repository).
declare module 'better-sqlite3' {
  namespace Database {
    type Param = string | number | bigint | null | Buffer;
    interface RunResult {
      readonly changes: number;
      readonly lastInsertRowid: number | bigint;
    }
    interface Statement {
      run(...params: Param[]): RunResult;
      get(...params: Param[]): unknown;
      all(...params: Param[]): unknown[];
    }
    interface Transaction<A extends unknown[], R> {
      (...args: A): R;
      immediate(...args: A): R;
    }
    interface Database {
      readonly open: boolean;
      pragma(source: string, options?: { simple?: boolean }): unknown;
      exec(source: string): Database;
      prepare(source: string): Statement;
      transaction<A extends unknown[], R>(fn: (...args: A) => R): Transaction<A, R>;
      function(name: string, options: { deterministic?: boolean }, fn: (...args: string[]) => number): Database;
      close(): Database;
    }
  }
  const Database: new (filename: string, options?: { timeout?: number }) => Database.Database;
  export = Database;
}
