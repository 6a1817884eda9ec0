import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { basename } from "node:path";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node";
import type { Diagnostic, InitializeParams, PublishDiagnosticsParams } from "vscode-languageserver-protocol";
import { AgentError } from "../../shared/errors.js";
import type { Logger } from "../log/logger.js";
import { FramedInput } from "../jsonrpc/framed-input.js";
import { type ProcessGroup, spawnGroup } from "../process/process-group.js";

/**
 * Reads a language server's stdout with vscode-jsonrpc's reader behind the framing guard: the
 * stock reader buffers a header block without bound, so a block over 8 KiB, a missing or absurd
 * Content-Length stops the stream and the reader's `onError` fires an `lsp.protocol_error`. A body
 * that is not JSON comes out of the same `onError` (from vscode-jsonrpc's parse); either marks the
 * server broken.
 */
export function lspMessageReader(stdout: Readable): StreamMessageReader {
  const input: FramedInput = new FramedInput(stdout, (violation) =>
    input.emit("error", new AgentError("lsp.protocol_error", `language server sent ${violation.message}`)),
  );
  return new StreamMessageReader(input as unknown as NodeJS.ReadableStream);
}

/**
 * The `initialize` request the daemon sends a language server for the workspace `root`: what the
 * client can do (full-text sync, versioned diagnostics, configuration requests). The LSP benchmark
 * sends the same one to its directly driven baseline server.
 */
export function initializeParams(root: string, initializationOptions?: unknown): InitializeParams {
  const rootUri = pathToFileURL(root).href;
  return {
    processId: process.pid,
    rootUri,
    rootPath: root,
    workspaceFolders: [{ uri: rootUri, name: basename(root) }],
    capabilities: {
      textDocument: {
        synchronization: { didSave: false, willSave: false, dynamicRegistration: false },
        publishDiagnostics: { versionSupport: true, relatedInformation: false },
      },
      workspace: { configuration: true, workspaceFolders: true },
      window: { workDoneProgress: false },
    },
    initializationOptions,
  };
}

export type ClientState = "starting" | "ready" | "broken" | "stopped";

/** Documents kept open per server; the least recently used is closed beyond this. */
const MAX_OPEN_DOCUMENTS = 64;
/** How long a server may take to shut down politely before it is killed. */
const SHUTDOWN_GRACE_MS = 2_000;

interface OpenDocument {
  uri: string;
  languageId: string;
  version: number;
  text: string;
  /** The latest diagnostics the server published for this document, null before the first. */
  diagnostics: Diagnostic[] | null;
  /** Counts publishes, so a waiter can ask for one that came after its change. */
  published: number;
}

export interface ClientOptions {
  id: string;
  root: string;
  command: string[];
  env: NodeJS.ProcessEnv;
  initializationOptions?: unknown;
  log: Logger;
  /** Called once when the server fails (exit, protocol error); not after `stop()`. */
  onFailure(reason: string): void;
}

/** One running language server for one workspace root. */
export class LspClient {
  state: ClientState = "starting";
  failure: string | null = null;
  readonly startedAt = Date.now();
  lastUsed = Date.now();
  /** Set once the first baseline came back: later waits use the ordinary timeout. */
  baselined = false;
  private child: ChildProcessWithoutNullStreams | null = null;
  /** The server's process group (daemon/process/): it and whatever it starts (tsserver, …) go together. */
  private group: ProcessGroup | null = null;
  private connection: MessageConnection | null = null;
  private readonly docs = new Map<string, OpenDocument>();
  private readonly waiters = new Set<() => void>();
  private stopping = false;

  constructor(private readonly options: ClientOptions) {}

  get id(): string {
    return this.options.id;
  }
  get root(): string {
    return this.options.root;
  }
  get pid(): number | null {
    return this.child?.pid ?? null;
  }
  get openDocuments(): number {
    return this.docs.size;
  }

  /** Spawn and initialize. Rejects when the server cannot be started or fails first. */
  async start(): Promise<void> {
    const [command, ...args] = this.options.command;
    // Its own recorded process group: a daemon killed with -9 stops the server (and its children) at the next start.
    const spawned = spawnGroup(command!, args, {
      cwd: this.root,
      env: this.options.env,
      stdio: ["pipe", "pipe", "pipe"],
      label: `lsp ${this.id}: ${this.options.command.join(" ")}`,
    });
    const child = spawned.child as ChildProcessWithoutNullStreams;
    this.child = child;
    this.group = spawned.group;
    // What the server started goes with it, and its record.
    child.once("exit", () => this.group?.forget({ killLeftovers: true }));
    const failed = new Promise<never>((_, reject) => {
      child.once("error", (error) => reject(new AgentError("lsp.start_failed", `${this.id}: cannot start ${command}: ${error.message}`)));
      child.once("exit", (code, signal) => reject(new AgentError("lsp.start_failed", `${this.id}: exited during start (${signal ?? `code ${code}`})`)));
    });
    failed.catch(() => undefined);
    child.on("exit", (code, signal) => this.fail(`exited (${signal ?? `code ${code}`})`));
    child.on("error", (error) => this.fail(`process error: ${error.message}`));
    let stderrBytes = 0;
    child.stderr.on("data", (chunk: Buffer) => {
      // Servers can be chatty on stderr; keep a little for diagnosis, not everything.
      if (stderrBytes > 16 * 1024) return;
      stderrBytes += chunk.length;
      this.options.log.debug("server stderr", { server: this.id, text: chunk.toString("utf8").slice(0, 2000) });
    });
    child.stdin.on("error", () => undefined);
    const reader = lspMessageReader(child.stdout);
    // Registered before the connection's own listener, so the reason names what was wrong.
    reader.onError((error) =>
      this.fail(error instanceof AgentError ? error.message : `language server sent a message that could not be read: ${error.message}`),
    );
    const connection = createMessageConnection(reader, new StreamMessageWriter(child.stdin));
    this.connection = connection;
    connection.onError(([error]) => this.fail(`connection error: ${error.message}`));
    connection.onNotification("textDocument/publishDiagnostics", (p: PublishDiagnosticsParams) => this.published(p));
    connection.onRequest((method, params) => this.serverRequest(method, params));
    connection.onNotification(() => undefined);
    connection.listen();
    const params = initializeParams(this.root, this.options.initializationOptions);
    await Promise.race([connection.sendRequest("initialize", params), failed]);
    connection.sendNotification("initialized", {});
    if (this.state === "starting") this.state = "ready";
  }

  private serverRequest(method: string, params: unknown): unknown {
    switch (method) {
      case "workspace/configuration":
        return ((params as { items?: unknown[] })?.items ?? []).map(() => null);
      case "workspace/workspaceFolders":
        return [{ uri: pathToFileURL(this.root).href, name: basename(this.root) }];
      default:
        // client/registerCapability, window/workDoneProgress/create, ...: accepted, ignored.
        return null;
    }
  }

  private published(p: PublishDiagnosticsParams): void {
    const doc = this.docs.get(p.uri);
    if (!doc) return;
    // A publish for an older version is stale (the change after it is still being checked).
    if (typeof p.version === "number" && p.version < doc.version) return;
    doc.diagnostics = p.diagnostics ?? [];
    doc.published++;
    for (const wake of [...this.waiters]) wake();
  }

  private fail(reason: string): void {
    if (this.stopping || this.state === "broken" || this.state === "stopped") return;
    this.state = "broken";
    this.failure = reason;
    for (const wake of [...this.waiters]) wake();
    this.options.onFailure(reason);
    this.kill();
  }

  /** What the server holds for a file, if it is open. */
  document(path: string): { text: string; diagnostics: Diagnostic[] | null; published: number } | null {
    const doc = this.docs.get(uriOf(path));
    return doc ? { text: doc.text, diagnostics: doc.diagnostics, published: doc.published } : null;
  }

  /** Open the file with `text`, or send `text` as its new full content; returns the publish count before. */
  sync(path: string, languageId: string, text: string): number {
    const connection = this.live();
    const uri = uriOf(path);
    this.lastUsed = Date.now();
    const doc = this.docs.get(uri);
    if (doc) {
      // Most recently used last, so the first entry is the one to close.
      this.docs.delete(uri);
      this.docs.set(uri, doc);
      doc.version++;
      doc.text = text;
      connection.sendNotification("textDocument/didChange", { textDocument: { uri, version: doc.version }, contentChanges: [{ text }] });
      return doc.published;
    }
    const opened: OpenDocument = { uri, languageId, version: 1, text, diagnostics: null, published: 0 };
    this.docs.set(uri, opened);
    connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text } });
    while (this.docs.size > MAX_OPEN_DOCUMENTS) {
      const oldest = this.docs.values().next().value as OpenDocument;
      this.docs.delete(oldest.uri);
      connection.sendNotification("textDocument/didClose", { textDocument: { uri: oldest.uri } });
    }
    return 0;
  }

  /**
   * The diagnostics of the first publish for `path` after publish number `after`, or null when
   * none came within `timeoutMs` or the server failed. With `settleMs`, waits until the server
   * has published nothing further for that long (servers that publish in several passes).
   */
  async diagnosticsAfter(path: string, after: number, timeoutMs: number, settleMs = 0, signal?: AbortSignal): Promise<Diagnostic[] | null> {
    const uri = uriOf(path);
    const deadline = Date.now() + timeoutMs;
    const current = () => this.docs.get(uri);
    let seen = after;
    for (;;) {
      const doc = current();
      if (!doc || this.state !== "ready" || signal?.aborted) return null;
      if (doc.published > seen) {
        if (settleMs <= 0) return doc.diagnostics;
        seen = doc.published;
        const more = await this.waitFor(() => (current()?.published ?? 0) > seen, Math.min(settleMs, deadline - Date.now()), signal);
        if (!more) return current()?.diagnostics ?? null;
        continue;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      await this.waitFor(() => (current()?.published ?? 0) > seen || this.state !== "ready", remaining, signal);
      if ((current()?.published ?? 0) <= seen) return null;
    }
  }

  /**
   * typescript-language-server publishes only when a kind of diagnostic changed (so a clean
   * edit to a clean file publishes nothing) and per kind (syntax before semantic), so no single
   * publish says "done". Its `typescript.tsserverRequest` command asks tsserver directly, which
   * answers for the document as last synced: a pull with a definite end.
   */
  async tsserverDiagnostics(path: string): Promise<Diagnostic[]> {
    const connection = this.live();
    this.lastUsed = Date.now();
    const ask = (command: string) =>
      connection.sendRequest("workspace/executeCommand", { command: "typescript.tsserverRequest", arguments: [command, { file: path }] }) as Promise<unknown>;
    const [syntactic, semantic] = await Promise.all([ask("syntacticDiagnosticsSync"), ask("semanticDiagnosticsSync")]);
    return [...tsserverBody(syntactic), ...tsserverBody(semantic)].map(fromTsserver);
  }

  /** Resolves true when `condition` holds, false after `ms`. */
  private waitFor(condition: () => boolean, ms: number, signal?: AbortSignal): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        signal?.removeEventListener("abort", abort);
        resolve(value);
      };
      const wake = () => {
        if (condition()) done(true);
      };
      const abort = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(wake);
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  private live(): MessageConnection {
    if (this.state !== "ready" || !this.connection)
      throw new AgentError("lsp.server_unavailable", `${this.id} is ${this.state}${this.failure ? `: ${this.failure}` : ""}`);
    return this.connection;
  }

  /** Mark broken from outside (a baseline that timed out) and end the process. */
  markBroken(reason: string): void {
    this.fail(reason);
  }

  /** Polite shutdown, then kill. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const wasReady = this.state === "ready";
    this.state = "stopped";
    for (const wake of [...this.waiters]) wake();
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (wasReady && this.connection) {
      const polite = (async () => {
        await this.connection!.sendRequest("shutdown");
        this.connection!.sendNotification("exit");
      })().catch(() => undefined);
      await Promise.race([polite.then(() => exited), delay(SHUTDOWN_GRACE_MS)]);
    }
    this.kill();
    await Promise.race([exited, delay(SHUTDOWN_GRACE_MS)]);
  }

  private kill(): void {
    try {
      this.connection?.dispose();
    } catch {
      // already disposed
    }
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    if (this.group) this.group.kill();
    else child.kill("SIGKILL");
  }
}

interface TsserverDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category?: string;
  source?: string;
}

function tsserverBody(response: unknown): TsserverDiagnostic[] {
  const r = response as { success?: boolean; body?: unknown; message?: string } | null;
  if (!r || r.success === false || !Array.isArray(r.body))
    throw new AgentError("lsp.server_unavailable", `tsserver did not answer a diagnostics request${r?.message ? `: ${r.message}` : ""}`);
  return r.body as TsserverDiagnostic[];
}

/** tsserver's 1-based line/offset and category → an LSP diagnostic, as typescript-language-server converts them. */
function fromTsserver(d: TsserverDiagnostic): Diagnostic {
  const severity = d.category === "warning" ? 2 : d.category === "suggestion" ? 4 : d.category === "message" ? 3 : 1;
  return {
    range: { start: { line: d.start.line - 1, character: d.start.offset - 1 }, end: { line: d.end.line - 1, character: d.end.offset - 1 } },
    message: d.text,
    severity,
    code: d.code,
    source: d.source || "typescript",
  };
}

export function uriOf(path: string): string {
  return pathToFileURL(path).href;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
