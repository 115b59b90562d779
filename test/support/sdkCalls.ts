import path from "node:path";
import ts from "typescript";

/**
 * Which AWS SDK commands a Lambda handler can send, read from the code (not declared by hand): from
 * the handler module, follow every function, method, constructor and variable the code refers to
 * (calls through an interface reach every implementation of that method name), and collect each
 * `…Command` class of an `@aws-sdk/client-*` or `@aws-sdk/lib-dynamodb` package it meets, and each
 * `paginate…` helper, also one read off a module loaded on first use (the table's
 * `new sdk.GetCommand(…)` in `shared/store/table.ts`: a store's `table.getItem` reaches it). An over-approximation at function granularity: a new SDK call anywhere the
 * handler can reach shows up here. A call through one of our interfaces (a port) reaches the
 * members of that name of the classes that declare they implement it and of the object literals
 * typed by it; only when there are none, every member of that name. The fakes of shared/testing/
 * never run in a Lambda and are not read.
 *
 * One refinement keeps it useful with a bag of services built at once: an object literal's field
 * that is built by a call or `new` (`tools: new ToolCatalog(…)`) counts only where a field of that
 * name is read (`services.tools`). Construction that itself sends a request would be missed; the
 * SDK clients and our adapters send nothing until used. Likewise the methods of an object literal
 * that implements one of our interfaces (`const catalog: ToolCatalog = { registryFor() {…} }`) run
 * where a member of that name is called, not where the object is built.
 */
export interface SdkCall {
  /** The SDK package, e.g. "client-sfn" or "lib-dynamodb". */
  readonly sdkPackage: string;
  /** The command without the "Command" suffix, e.g. "SendTaskSuccess". */
  readonly command: string;
  /** Where it is referenced (project-relative file:line), for the failure message. */
  readonly at: string;
  /** How the handler reaches it: file:line of each reference on the way, from the handler on. */
  readonly path: string[];
}

const SDK_FILE = /[\\/]node_modules[\\/]@aws-sdk[\\/](client-[a-z0-9-]+|lib-dynamodb)[\\/]/;

export class SdkCallGraph {
  private readonly program: ts.Program;
  private readonly checker: ts.TypeChecker;
  /** Every function-like member of a class or object literal in the project, by name. */
  private readonly implementations = new Map<string, ts.Node[]>();
  /** Object-literal fields built by a call or `new`, by name: they run where the field is read. */
  private readonly builtFields = new Map<string, ts.Node[]>();
  /** The members implementing each of our interfaces, by interface and member name. */
  private readonly implementationsOf = new Map<ts.Symbol, Map<string, ts.Node[]>>();

  constructor(private readonly root: string) {
    const configPath = path.join(root, "tsconfig.json");
    const config = ts.readConfigFile(configPath, ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    // Lambda code is functions/ and shared/; infra/ (CDK, the local emulators) never runs in a Lambda.
    const sources = parsed.fileNames.filter((f) => {
      const parts = path.relative(root, f).split(path.sep);
      return ["functions", "shared"].includes(parts[0]!) && !(parts[0] === "shared" && parts[1] === "testing");
    });
    this.program = ts.createProgram(sources, parsed.options);
    this.checker = this.program.getTypeChecker();
    for (const file of this.projectFiles()) this.indexMembers(file);
  }

  private readonly cache = new Map<string, SdkCall[]>();

  /** The SDK commands the handler in `entry` (project-relative) can send. */
  callsOf(entry: string): SdkCall[] {
    const calls = this.cache.get(entry) ?? this.read(entry);
    this.cache.set(entry, calls);
    return calls;
  }

  /**
   * The SDK commands the objects a module builds can send when their members are called: a tool's
   * `run`, which an agent calls through the Tool interface (callsOf counts it only where called).
   */
  callsOfMembers(module: string): SdkCall[] {
    const calls = this.cache.get(`members:${module}`) ?? this.read(module, true);
    this.cache.set(`members:${module}`, calls);
    return calls;
  }

  private read(entry: string, runMembers = false): SdkCall[] {
    const file = this.program.getSourceFile(path.join(this.root, entry));
    if (!file) throw new Error(`${entry} is not part of the TypeScript project`);
    const calls = new Map<string, SdkCall>();
    const seen = new Set<ts.Node>();
    /** Each reached piece of code → the reference that reached it, for `path`. */
    const via = new Map<ts.Node, { from: ts.Node; at: ts.Node }>();
    const trail = (node: ts.Node, at: ts.Node): string[] => {
      const steps = [this.where(at)];
      for (let step = via.get(node); step && steps.length < 30; step = via.get(step.from)) steps.unshift(this.where(step.at));
      return steps;
    };
    let current: ts.Node = file;
    const seenFiles = new Set<ts.SourceFile>();
    const queue: ts.Node[] = [file];
    const enqueue = (node: ts.Node | undefined, at?: ts.Node) => {
      if (!node || seen.has(node)) return;
      seen.add(node);
      if (at) via.set(node, { from: current, at });
      queue.push(node);
      // Importing a module runs its top-level statements.
      const source = node.getSourceFile();
      if (!seenFiles.has(source)) {
        seenFiles.add(source);
        for (const statement of source.statements) if (ts.isExpressionStatement(statement)) enqueue(statement, at);
      }
    };
    const reference = (id: ts.Identifier) => {
      let symbol = this.checker.getSymbolAtLocation(id);
      if (!symbol) return;
      if (symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
      for (const declaration of symbol.declarations ?? []) {
        const fileName = declaration.getSourceFile().fileName;
        const sdk = SDK_FILE.exec(fileName);
        if (sdk) {
          const command = /^(\w+)Command$/.exec(symbol.name)?.[1] ?? /^paginate(\w+)$/.exec(symbol.name)?.[1];
          if (command && !calls.has(`${sdk[1]}:${command}`))
            calls.set(`${sdk[1]}:${command}`, { sdkPackage: sdk[1]!, command, at: this.where(id), path: trail(current, id) });
          continue;
        }
        if (!this.isProjectFile(declaration.getSourceFile())) continue;
        for (const code of this.codeOf(declaration)) enqueue(code, id);
      }
    };
    const visit = (node: ts.Node): void => {
      if (this.isBuiltField(node)) return; // runs where the field is read
      // Runs where it is called (unless it is what is asked about: the members of the module read).
      if (isFunctionMember(node) && this.implementsOurInterface(node.parent) && !(runMembers && node.getSourceFile() === file)) return;
      if (
        ts.isTypeNode(node) ||
        ts.isInterfaceDeclaration(node) ||
        ts.isTypeAliasDeclaration(node) ||
        ts.isImportDeclaration(node) ||
        ts.isExportDeclaration(node)
      )
        return;
      if (ts.isIdentifier(node)) reference(node);
      ts.forEachChild(node, visit);
    };
    enqueue(file);
    while (queue.length) {
      const node = queue.pop()!;
      current = node;
      if (ts.isSourceFile(node)) {
        // The handler module itself: all of it runs (or is exported to Lambda).
        for (const statement of node.statements) visit(statement);
      } else if (this.isBuiltField(node)) {
        visit(node.initializer);
      } else if (isFunctionMember(node)) {
        ts.forEachChild(node, visit); // a member reached by a call runs its body (visit() skips members met while walking their object)
      } else {
        visit(node);
      }
    }
    return [...calls.values()].sort((a, b) => `${a.sdkPackage}:${a.command}`.localeCompare(`${b.sdkPackage}:${b.command}`));
  }

  /** The code a reference to this declaration can run. */
  private codeOf(declaration: ts.Declaration): ts.Node[] {
    if (ts.isClassDeclaration(declaration) || ts.isClassExpression(declaration)) {
      // `new X()` runs the constructor, field initializers and the base class's constructor.
      const parts: ts.Node[] = declaration.members.filter(
        (m) =>
          ts.isConstructorDeclaration(m) ||
          ts.isClassStaticBlockDeclaration(m) ||
          (ts.isPropertyDeclaration(m) && m.initializer !== undefined),
      );
      for (const clause of declaration.heritageClauses ?? [])
        if (clause.token === ts.SyntaxKind.ExtendsKeyword) parts.push(...clause.types.map((t) => t.expression));
      return parts;
    }
    if (
      ts.isMethodSignature(declaration) ||
      (ts.isPropertySignature(declaration) && declaration.type && ts.isFunctionTypeNode(declaration.type))
    ) {
      // A call through an interface: its implementations of that name may run (any of that name, if it has none).
      const name = declaration.name.getText();
      const owner = ts.isInterfaceDeclaration(declaration.parent) ? this.checker.getSymbolAtLocation(declaration.parent.name) : undefined;
      const own = owner ? this.implementationsOf.get(owner)?.get(name) : undefined;
      return own?.length ? own : (this.implementations.get(name) ?? []);
    }
    if (ts.isPropertySignature(declaration)) {
      // A field of that name built in a literal typed by a type that has this very property (or in an untyped literal).
      const name = declaration.name.getText();
      return (this.builtFields.get(name) ?? []).filter((field) => this.mayHold(field, name, declaration));
    }
    if (ts.isParameter(declaration) || ts.isTypeParameterDeclaration(declaration)) return [];
    if (ts.isInterfaceDeclaration(declaration) || ts.isTypeAliasDeclaration(declaration) || ts.isModuleDeclaration(declaration)) return [];
    return [declaration];
  }

  /** Whether a built field can be what a read of `property` returns: its literal's type has that property, or no type. */
  private mayHold(field: ts.Node, name: string, property: ts.Declaration): boolean {
    const type = ts.isObjectLiteralExpression(field.parent) ? this.checker.getContextualType(field.parent) : undefined;
    if (!type) return true;
    const parts = type.isUnion() ? type.types : [type];
    return parts.some((part) => {
      const own = this.checker.getApparentType(part).getProperty(name);
      return own !== undefined && (!own.declarations?.length || own.declarations.includes(property));
    });
  }

  /** An object literal typed by one of our interfaces (its methods are called by our code, by name). */
  private implementsOurInterface(node: ts.Node): boolean {
    if (!ts.isObjectLiteralExpression(node)) return false;
    return this.contextualSymbols(node).some((symbol) => (symbol.declarations ?? []).some((d) => this.isProjectFile(d.getSourceFile())));
  }

  /** The types an object literal is given by its context; an async function's return is `T | PromiseLike<T>`, so each part. */
  private contextualSymbols(node: ts.ObjectLiteralExpression): ts.Symbol[] {
    const type = this.checker.getContextualType(node);
    return (type?.isUnion() ? type.types : type ? [type] : [])
      .map((part) => part.aliasSymbol ?? part.getSymbol())
      .filter((symbol): symbol is ts.Symbol => symbol !== undefined);
  }

  private indexMembers(file: ts.SourceFile) {
    const add = (name: ts.PropertyName | undefined, node: ts.Node) => {
      if (!name || !(ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name))) return;
      const list = this.implementations.get(name.text) ?? [];
      list.push(node);
      this.implementations.set(name.text, list);
    };
    const isFunction = (e: ts.Expression | undefined) => !!e && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));
    const addFor = (owner: ts.Node, name: ts.PropertyName | undefined, node: ts.Node) => {
      if (!name || !(ts.isIdentifier(name) || ts.isStringLiteral(name))) return;
      for (const symbol of this.interfacesOf(owner)) {
        const members = this.implementationsOf.get(symbol) ?? new Map<string, ts.Node[]>();
        members.set(name.text, [...(members.get(name.text) ?? []), node]);
        this.implementationsOf.set(symbol, members);
      }
    };
    const visit = (node: ts.Node): void => {
      if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node)) {
        add(node.name, node);
        addFor(node.parent, node.name, node);
      } else if ((ts.isPropertyDeclaration(node) || ts.isPropertyAssignment(node)) && isFunction(node.initializer)) {
        add(node.name, node);
        addFor(node.parent, node.name, node);
      }
      if (this.isBuiltField(node) && ts.isIdentifier(node.name)) {
        const list = this.builtFields.get(node.name.text) ?? [];
        list.push(node);
        this.builtFields.set(node.name.text, list);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }

  /** The interfaces a class declares it implements, or the one an object literal is typed by. */
  private interfacesOf(owner: ts.Node): ts.Symbol[] {
    const resolve = (symbol: ts.Symbol | undefined) =>
      symbol && symbol.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(symbol) : symbol;
    if (ts.isClassDeclaration(owner) || ts.isClassExpression(owner)) {
      return (owner.heritageClauses ?? [])
        .filter((clause) => clause.token === ts.SyntaxKind.ImplementsKeyword)
        .flatMap((clause) => clause.types.map((t) => resolve(this.checker.getSymbolAtLocation(t.expression))))
        .filter((symbol): symbol is ts.Symbol => symbol !== undefined);
    }
    if (ts.isObjectLiteralExpression(owner)) {
      // A literal handed to a factory that returns it as one of our interfaces (`defineTool({ run… })`
      // is a Tool) implements that interface: its members run where the interface's are called.
      const made =
        ts.isCallExpression(owner.parent) && owner.parent.arguments.includes(owner)
          ? this.checker.getTypeAtLocation(owner.parent).getSymbol()
          : undefined;
      return [...this.contextualSymbols(owner), made].filter(
        (s): s is ts.Symbol => s !== undefined && (s.flags & ts.SymbolFlags.Interface) !== 0,
      );
    }
    return [];
  }

  private projectFiles(): ts.SourceFile[] {
    return this.program.getSourceFiles().filter((f) => this.isProjectFile(f));
  }

  private isProjectFile(file: ts.SourceFile): boolean {
    return !file.isDeclarationFile && !file.fileName.includes("/node_modules/") && file.fileName.startsWith(this.root);
  }

  /**
   * A field built by a call or `new` that holds a service (`tools: new ToolCatalog(…)`): it runs
   * where a field of its name is read. A field holding plain data (`idempotencyKey: keyOf(…)`) is
   * computed where its object is built, like any other expression, and reading it runs nothing.
   */
  private isBuiltField(node: ts.Node): node is ts.PropertyAssignment {
    if (!isBuiltByCall(node)) return false;
    const type = this.checker.getTypeAtLocation(node.initializer);
    const parts = type.isUnion() ? type.types : [type];
    // Data: primitives, and arrays and plain records of data (a prompt's tool lines), which run nothing where read.
    const isData = (part: ts.Type, depth = 0): boolean =>
      (part.flags & DATA_FLAGS) !== 0 ||
      (part.isUnion() && part.types.every((t) => isData(t, depth))) ||
      (this.checker.isArrayType(part) && this.checker.getTypeArguments(part as ts.TypeReference).every((t) => isData(t, depth))) ||
      (depth < 3 &&
        (part.flags & ts.TypeFlags.Object) !== 0 &&
        !part.getSymbol()?.declarations?.some((d) => ts.isClassDeclaration(d)) &&
        part.getCallSignatures().length === 0 &&
        part.getConstructSignatures().length === 0 &&
        part.getProperties().length > 0 &&
        part.getProperties().every((p) => isData(this.checker.getTypeOfSymbol(p), depth + 1)));
    return !parts.every((part) => isData(part));
  }

  private where(node: ts.Node): string {
    const file = node.getSourceFile();
    return `${path.relative(this.root, file.fileName)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  }
}

function isFunctionMember(node: ts.Node): boolean {
  return (
    ts.isMethodDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    (ts.isPropertyAssignment(node) && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)))
  );
}

function isBuiltByCall(node: ts.Node): node is ts.PropertyAssignment {
  return ts.isPropertyAssignment(node) && (ts.isNewExpression(node.initializer) || ts.isCallExpression(node.initializer));
}

/** Plain data (strings, numbers, booleans, null, undefined, unions and arrays of them): reading it runs nothing. */
const DATA_FLAGS =
  ts.TypeFlags.StringLike |
  ts.TypeFlags.NumberLike |
  ts.TypeFlags.BooleanLike |
  ts.TypeFlags.BigIntLike |
  ts.TypeFlags.EnumLike |
  ts.TypeFlags.Undefined |
  ts.TypeFlags.Null |
  ts.TypeFlags.Void;

/** IAM service prefix of each SDK package. */
const SERVICE_PREFIX: Record<string, string> = {
  "client-dynamodb": "dynamodb",
  "lib-dynamodb": "dynamodb",
  "client-sfn": "states",
  "client-sqs": "sqs",
  "client-secrets-manager": "secretsmanager",
  "client-s3": "s3",
  "client-kms": "kms",
  "client-lambda": "lambda",
  "client-bedrock-agentcore": "bedrock-agentcore",
  "client-cloudwatch": "cloudwatch",
  "client-eventbridge": "events",
};

/** Commands whose IAM action is not "<prefix>:<command>". */
const ACTIONS_BY_COMMAND: Record<string, string[]> = {
  "lib-dynamodb:Get": ["dynamodb:GetItem"],
  "lib-dynamodb:Put": ["dynamodb:PutItem"],
  "lib-dynamodb:Update": ["dynamodb:UpdateItem"],
  "lib-dynamodb:Delete": ["dynamodb:DeleteItem"],
  "lib-dynamodb:BatchGet": ["dynamodb:BatchGetItem"],
  "lib-dynamodb:BatchWrite": ["dynamodb:BatchWriteItem"],
  "lib-dynamodb:TransactGet": ["dynamodb:GetItem"],
  "lib-dynamodb:TransactWrite": ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"],
  "client-s3:HeadObject": ["s3:GetObject"],
  "client-s3:ListObjectsV2": ["s3:ListBucket"],
  "client-s3:ListObjects": ["s3:ListBucket"],
  "client-s3:CopyObject": ["s3:GetObject", "s3:PutObject"],
  "client-s3:DeleteObjects": ["s3:DeleteObject"],
  "client-s3:CreateMultipartUpload": ["s3:PutObject"],
  "client-s3:UploadPart": ["s3:PutObject"],
  "client-s3:CompleteMultipartUpload": ["s3:PutObject"],
  "client-lambda:Invoke": ["lambda:InvokeFunction"],
  "client-lambda:InvokeWithResponseStream": ["lambda:InvokeFunction"],
  "client-sqs:SendMessageBatch": ["sqs:SendMessage"],
  "client-sqs:DeleteMessageBatch": ["sqs:DeleteMessage"],
};

/** The IAM actions a role needs for one SDK call; throws for a package this table does not know yet. */
export function iamActionsFor(call: SdkCall): string[] {
  const special = ACTIONS_BY_COMMAND[`${call.sdkPackage}:${call.command}`];
  if (special) return special;
  const prefix = SERVICE_PREFIX[call.sdkPackage];
  if (!prefix)
    throw new Error(
      `No IAM service prefix known for @aws-sdk/${call.sdkPackage} (${call.command} at ${call.at}): add it to test/support/sdkCalls.ts`,
    );
  return [`${prefix}:${call.command}`];
}

/** Whether an IAM action pattern (with `*` and `?`) grants the action; IAM compares case-insensitively. */
export function actionMatches(pattern: string, action: string): boolean {
  const regex = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
    "i",
  );
  return regex.test(action);
}
