import path from "node:path";
import GithubSlugger, { slug } from "github-slugger";
import { marked, type Token, type Tokens } from "marked";

/**
 * The links and section pointers of the README, docs/ and the code, checked against the files and
 * headings they name: a relative link must reach a file that exists, an #anchor a heading of its
 * page (GitHub's slugs: github-slugger), and a pointer in prose or a comment — `docs/x.md, "Heading"`,
 * `README, "Heading"` or `x.md § "Heading"` — a heading of that page. Markdown is read with marked,
 * so code blocks and inline code hold no links or headings.
 */

/** A repository's files as the check sees them: path (relative to the root, with "/") → text, for the pages and the code it reads. */
export type Files = Map<string, string>;

/** Every heading's anchor in a Markdown page, as GitHub makes them (a repeated heading gets -1, -2, …). */
export function headingAnchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  marked.walkTokens(marked.lexer(markdown), (token) => {
    if (token.type === "heading") anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens)));
  });
  return anchors;
}

/** The text a heading shows, as GitHub slugs it: inline code and emphasis as their text, HTML tags left out. */
function plainText(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => {
      if (token.type === "html") return "";
      if ("tokens" in token && token.tokens) return plainText(token.tokens);
      return "text" in token ? String(token.text) : "";
    })
    .join("");
}

/** The targets of a page's links and images, Markdown and HTML ones, outside code. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  marked.walkTokens(marked.lexer(markdown), (token) => {
    if (token.type === "link" || token.type === "image") targets.push((token as Tokens.Link).href);
    if (token.type === "html") {
      for (const match of (token as Tokens.HTML).text.matchAll(/\b(?:href|src)\s*=\s*"([^"]*)"/gi)) targets.push(match[1]);
    }
  });
  return targets;
}

/** A pointer to a page's section in prose or a comment: the page as written, and the heading it names. */
export function sectionPointers(text: string): { page: string; heading: string }[] {
  const pointers = [...text.matchAll(/((?:[\w.-]+\/)*[\w.-]+\.md|\bREADME)(?:, | § | section )"([^"\n]+)"/g)];
  return pointers.map(([, page, heading]) => ({ page, heading }));
}

/** What is wrong with the links and pointers of `files`: one line per problem, naming the file. */
export function linkProblems(files: Files, exists: (file: string) => boolean): string[] {
  const problems: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (page: string) => {
    if (!anchorsOf.has(page)) anchorsOf.set(page, headingAnchors(files.get(page) ?? ""));
    return anchorsOf.get(page) as Set<string>;
  };
  for (const [file, text] of files) {
    const dir = path.posix.dirname(file);
    if (file.endsWith(".md")) {
      for (const target of linkTargets(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not this repository's
        const [rawPath, anchor] = target.split("#", 2);
        const linked = rawPath ? path.posix.normalize(path.posix.join(dir, decodeURI(rawPath.split("?")[0]))) : file;
        if (linked.startsWith("..") || !exists(linked)) problems.push(`${file}: the link ${target} leads to no file`);
        else if (anchor !== undefined && linked.endsWith(".md") && !anchors(linked).has(decodeURIComponent(anchor)))
          problems.push(`${file}: the link ${target} names no heading of ${linked}`);
      }
    }
    for (const { page, heading } of sectionPointers(text)) {
      const named = page === "README" ? "README.md" : page;
      // A page named from its own folder (docs/ naming a sibling) or from the root (code naming docs/x.md).
      const candidates = [path.posix.join(dir, named), named];
      const target = candidates.find((candidate) => files.has(candidate));
      if (!target) problems.push(`${file}: "${page}, ${heading}" points to a page that does not exist`);
      else if (!anchors(target).has(slug(heading))) problems.push(`${file}: "${page}, ${heading}" names no heading of ${target}`);
    }
    if (/\bDESIGN(?:\.md)?\s*§/.test(text)) problems.push(`${file}: cites "DESIGN §…", a document this repository does not have`);
  }
  return problems;
}
