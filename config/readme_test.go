package config

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README lists the directives that are accepted but have no effect;
// the table is the source of truth and this keeps the two in step.
func TestReadmeListsNoEffectDirectives(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	block := regexp.MustCompile(`(?s)<!-- no-effect:begin -->(.*)<!-- no-effect:end -->`).FindSubmatch(raw)
	require.NotNil(t, block, "README.md lacks the no-effect block")
	listed := regexp.MustCompile("`([a-z0-9_-]+)`").FindAllStringSubmatch(string(block[1]), -1)
	var got []string
	for _, m := range listed {
		got = append(got, m[1])
	}
	sort.Strings(got)
	var want []string
	for _, d := range Directives() {
		if d.NoEffect && !d.Hidden {
			want = append(want, d.Name)
		}
	}
	sort.Strings(want)
	require.Equal(t, want, got, "README.md no-effect list; expected:\n%s", strings.Join(backquote(want), " "))
}

func backquote(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return out
}
