// Package docs holds the manual (README.md is its front door) and the
// tests that keep it true: the package map of architecture.md against
// the real import graph, and every relative link of the Markdown pages.
//
// ZREDIS_UPDATE_DOCS=1 go test ./docs/ rewrites the generated parts of
// architecture.md (the order of the map and its imports column), keeping
// the descriptions; a package new to the map still needs its line.
package docs

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = ".." // the module's root, from this directory

var update = os.Getenv("ZREDIS_UPDATE_DOCS") != ""

// pkg is one package of the module: its path inside the module
// ("persistence/aof"), the module's packages its non-test files import,
// and whether it has only test files (tests/, docs/).
type pkg struct {
	path     string
	imports  []string
	testOnly bool
}

// modulePackages reads every package of the module with go/build: the
// files the go command would build here, their imports restricted to the
// module's own packages. Directories the go command skips (testdata,
// names starting with . or _) and node_modules are skipped.
func modulePackages(t *testing.T) map[string]*pkg {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod has no module line")
	module := string(m[1])

	pkgs := map[string]*pkg{}
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(dir, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		p := &pkg{path: filepath.ToSlash(rel), testOnly: len(bp.GoFiles)+len(bp.CgoFiles) == 0}
		for _, imp := range bp.Imports {
			if strings.HasPrefix(imp, module+"/") {
				p.imports = append(p.imports, strings.TrimPrefix(imp, module+"/"))
			}
		}
		sort.Strings(p.imports)
		pkgs[p.path] = p
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	return pkgs
}

// levels gives each package its height in the import graph: 0 for a
// package that imports none of the module's, else one more than the
// highest package it imports. It fails on a cycle.
func levels(t *testing.T, pkgs map[string]*pkg) map[string]int {
	level := map[string]int{}
	const visiting = -1
	var visit func(p string, stack []string) int
	visit = func(p string, stack []string) int {
		if l, ok := level[p]; ok {
			require.NotEqual(t, visiting, l, "import cycle: %s -> %s", strings.Join(stack, " -> "), p)
			return l
		}
		level[p] = visiting
		l := 0
		for _, imp := range pkgs[p].imports {
			require.Contains(t, pkgs, imp, "%s imports %s, which is not a package of the module", p, imp)
			l = max(l, visit(imp, append(stack, p))+1)
		}
		level[p] = l
		return l
	}
	for p := range pkgs {
		visit(p, nil)
	}
	return level
}

// block returns the text between <!-- name:begin --> and <!-- name:end -->
// in text, and a function that replaces it.
func block(t *testing.T, text, name string) (string, func(string) string) {
	re := regexp.MustCompile(`(?s)(<!-- ` + name + `:begin -->)(.*?)(<!-- ` + name + `:end -->)`)
	m := re.FindStringSubmatchIndex(text)
	require.NotNil(t, m, "architecture.md lacks the %s block", name)
	inner := text[m[4]:m[5]]
	return inner, func(s string) string { return text[:m[4]] + s + text[m[5]:] }
}

// tableRows reads the rows of a Markdown table whose first column is a
// package in backquotes: package -> description (second column).
func tableRows(t *testing.T, table string) map[string]string {
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| `") || !strings.HasSuffix(line, "|") {
			continue
		}
		line = strings.ReplaceAll(line, `\|`, "\x00") // an escaped | is text
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "\x00", `\|`)
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		desc := ""
		if len(cells) > 1 {
			desc = strings.TrimSpace(cells[1])
		}
		_, dup := rows[name]
		assert.False(t, dup, "%s has two rows", name)
		rows[name] = desc
	}
	return rows
}

func codeList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

// The package map of architecture.md is the module's import graph: one
// row per package, top of the graph first (a package imports only
// packages in rows below its own), with the packages it imports; and one
// row per package of tests alone. Each row says what the package owns.
func TestArchitecturePackageMap(t *testing.T) {
	file := "architecture.md"
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	text := string(raw)
	pkgs := modulePackages(t)
	level := levels(t, pkgs)

	var built, testOnly []string
	for p, info := range pkgs {
		if info.testOnly {
			testOnly = append(testOnly, p)
		} else {
			built = append(built, p)
		}
	}
	sort.Slice(built, func(i, j int) bool {
		a, b := built[i], built[j]
		if level[a] != level[b] {
			return level[a] > level[b]
		}
		return a < b
	})
	sort.Strings(testOnly)

	render := func(name, head string, names []string, columns func(p, owns string) string) {
		inner, replace := block(t, text, name)
		owns := tableRows(t, inner)
		var b strings.Builder
		b.WriteString("\n" + head + "\n")
		for _, p := range names {
			b.WriteString(columns(p, owns[p]) + "\n")
			if strings.TrimSpace(owns[p]) == "" {
				t.Errorf("%s: the package %s has no line saying what it owns", file, p)
			}
		}
		for p := range owns {
			if _, ok := pkgs[p]; !ok {
				t.Errorf("%s: %s is in the map but is not a package of the module", file, p)
			}
		}
		if update {
			text = replace(b.String())
			return
		}
		if want := b.String(); want != inner {
			// Name the rows that differ rather than print two tables.
			have := map[string]bool{}
			for _, l := range strings.Split(inner, "\n") {
				have[l] = true
			}
			var wrong []string
			for _, l := range strings.Split(want, "\n") {
				if !have[l] {
					wrong = append(wrong, "  "+l)
				}
			}
			if len(wrong) == 0 {
				wrong = append(wrong, "  (the rows are right but out of order: top of the graph first)")
			}
			t.Errorf("%s: the %s block does not match the import graph; it should have:\n%s\nZREDIS_UPDATE_DOCS=1 go test ./docs/ regenerates it, keeping the descriptions",
				file, name, strings.Join(wrong, "\n"))
		}
	}
	render("packages", "| package | owns | imports |\n| --- | --- | --- |", built, func(p, owns string) string {
		return "| `" + p + "` | " + owns + " | " + codeList(pkgs[p].imports) + " |"
	})
	render("test-packages", "| package | what it tests |\n| --- | --- |", testOnly, func(p, owns string) string {
		return "| `" + p + "` | " + owns + " |"
	})
	if update {
		require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	}
}

// Every arrow drawn in architecture.md's picture (a -> b, a ----> b) is
// an import of the module: the picture may leave arrows out, never draw
// one that is not there.
func TestArchitectureArrows(t *testing.T) {
	raw, err := os.ReadFile("architecture.md")
	require.NoError(t, err)
	inner, _ := block(t, string(raw), "arrows")
	pkgs := modulePackages(t)
	arrows := 0
	for _, line := range strings.Split(inner, "\n") {
		if !strings.Contains(line, ">") {
			continue
		}
		names := regexp.MustCompile(`\s*-+>\s*`).Split(strings.TrimSpace(line), -1)
		for i := 0; i+1 < len(names); i++ {
			from, to := names[i], names[i+1]
			require.Contains(t, pkgs, from, "the picture names %q, which is not a package", from)
			assert.Contains(t, pkgs[from].imports, to, "the picture draws %s -> %s, which is not an import", from, to)
			arrows++
		}
	}
	assert.NotZero(t, arrows, "the arrows block draws no arrow")
}

var (
	fenceRE  = regexp.MustCompile("(?m)^```[^\n]*\n(?s:.*?)^```[^\n]*$")
	inlineRE = regexp.MustCompile("`[^`\n]*`")
	linkRE   = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	headRE   = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// prose is a Markdown page without its code: fenced blocks and inline
// code spans, where a link or a heading is not one.
func prose(text string) string {
	text = fenceRE.ReplaceAllString(text, "")
	return inlineRE.ReplaceAllString(text, "``")
}

// anchors are the fragments GitHub gives a page's headings: lower case,
// punctuation dropped (but - and _), spaces as -, a repeated one with -1,
// -2...
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(text, ""), -1) {
		h := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// pages are the Markdown files the links test reads: README.md, docs/
// and the Perl client's README, relative to the module's root.
func pages(t *testing.T) []string {
	list := []string{"README.md", "clients/perl/README.md"}
	docs, err := filepath.Glob("*.md")
	require.NoError(t, err)
	for _, d := range docs {
		list = append(list, "docs/"+d)
	}
	return list
}

// Every relative link of README.md and docs/ reaches a file, and a
// fragment reaches a heading of its page; README links to every page of
// docs/.
func TestLinks(t *testing.T) {
	read := func(p string) string {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		require.NoError(t, err)
		return string(raw)
	}
	fromReadme := map[string]bool{}
	for _, page := range pages(t) {
		text := read(page)
		for _, m := range linkRE.FindAllStringSubmatch(prose(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = path.Clean(path.Join(path.Dir(page), file))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
					t.Errorf("%s: the link %s reaches no file (%s)", page, target, dest)
					continue
				}
			}
			if page == "README.md" {
				fromReadme[dest] = true
			}
			if frag != "" {
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: the link %s has a fragment into a file that is not Markdown", page, target)
				} else if !anchors(read(dest))[frag] {
					t.Errorf("%s: the link %s names no heading of %s", page, target, dest)
				}
			}
		}
	}
	for _, page := range pages(t) {
		if strings.HasPrefix(page, "docs/") && !fromReadme[page] {
			t.Errorf("README.md does not link to %s", page)
		}
	}
}

// The anchors are GitHub's.
func TestAnchors(t *testing.T) {
	a := anchors("# zredis's own directives\n## CURVE: only allowed listeners, encrypted\n```\n# not a heading\n```\n## `INFO expiry`\n## INFO expiry\n")
	assert.Equal(t, map[string]bool{
		"zrediss-own-directives":                 true,
		"curve-only-allowed-listeners-encrypted": true,
		"info-expiry":                            true,
		"info-expiry-1":                          true,
	}, a)
}
