package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDiffSuitesOverResp3 runs every differential test of this package
// (each Test function that calls NewDiff) a second time, with both of
// each Diff's connections in RESP3 (HELLO 3): the same commands, their
// replies now compared in RESP3's types (maps, sets, doubles, nulls,
// pushes) with redis-server's. The pass is this test binary run again
// with ZREDIS_TEST_RESP=3, so no suite exists twice and a new
// differential test joins it by being one.
func TestDiffSuitesOverResp3(t *testing.T) {
	if diffResp3 {
		t.Skip("this is the RESP3 pass")
	}
	RequireRedis(t)
	names := differentialTests(t)
	if len(names) < 50 {
		t.Fatalf("only %d differential tests found: %v", len(names), names)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(names, "|")+")$",
		"-test.count=1", "-test.parallel=4", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), "ZREDIS_TEST_RESP=3", "ZREDIS_TEST_BINDIR="+testBinDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the RESP3 pass of %d differential tests failed: %v\n%s", len(names), err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("RESP3 pass of %d tests: %s", len(names), strings.Join(lines[max(len(lines)-2, 0):], "; "))
}

// differentialTests lists the Test functions of this package's files
// whose bodies call NewDiff.
func differentialTests(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			calls := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "NewDiff" {
						calls = true
					}
				}
				return !calls
			})
			if calls {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}
