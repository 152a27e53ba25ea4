package config

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every directive says what zredis does with it; a directive added to the
// table without a classification fails here.
func TestEveryDirectiveHasAnEffect(t *testing.T) {
	for _, d := range Directives() {
		assert.NotEqual(t, EffectUnset, d.Effect, "%s has no entry in effects.go", d.Name)
		assert.Equal(t, d.Effect == EffectNone, d.NoEffect, "%s: NoEffect and Effect disagree", d.Name)
		if d.Effect != EffectWorks {
			assert.NotEmpty(t, d.EffectNote, "%s: a %s directive says why", d.Name, d.Effect)
		}
		assert.Equal(t, d.Effect == EffectRefuses, d.refuse != nil, "%s: only a refusing directive refuses", d.Name)
	}
}

// The default of a refusing directive is a value zredis honours.
func TestRefusingDirectivesAcceptTheirDefault(t *testing.T) {
	c := New()
	for _, d := range Directives() {
		if d.Effect == EffectRefuses {
			e := lookup(d.Name)
			assert.Empty(t, refused(&directives[e.index], c.vals[e.index].Load()), d.Name)
		}
	}
}

// README's generated lists (no effect, refused, pending) match the table.
// ZREDIS_UPDATE_README=1 go test -run TestReadmeDirectiveLists ./config/
// rewrites them.
func TestReadmeDirectiveLists(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	text := string(raw)
	for name, want := range ReadmeBlocks() {
		re := regexp.MustCompile(`(?s)(<!-- ` + name + `:begin -->)(.*?)(<!-- ` + name + `:end -->)`)
		m := re.FindStringSubmatch(text)
		require.NotNil(t, m, "README.md lacks the %s block", name)
		if os.Getenv("ZREDIS_UPDATE_README") != "" {
			text = re.ReplaceAllLiteralString(text, m[1]+want+m[3])
			continue
		}
		assert.Equal(t, want, m[2], "README.md %s block (ZREDIS_UPDATE_README=1 regenerates it)", name)
	}
	if os.Getenv("ZREDIS_UPDATE_README") != "" {
		require.NoError(t, os.WriteFile("../README.md", []byte(text), 0o644))
	}
}

// A value zredis refuses stops the load, naming the line that set it
// last; a later line that sets a value zredis honours wins, as a
// command-line override does.
func TestLoadRefusesUnsupportedValues(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/z.conf"
	require.NoError(t, os.WriteFile(file, []byte("port 7000\ncluster-enabled yes\n"), 0o644))
	_, err := Load(file, "")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Line)
	assert.Equal(t, "cluster-enabled yes", ce.Text)
	assert.Contains(t, err.Error(), "cluster-enabled yes is not supported: zredis is not a cluster node")

	_, err = Load(file, "cluster-enabled no\n")
	assert.NoError(t, err)
}

// CONFIG SET refuses the same values where the directive is settable
// (no settable directive refuses a value today; the test gives one a
// refusal for its duration), and the old value stays.
func TestSetRefusesUnsupportedValues(t *testing.T) {
	d := &directives[mustIndex("activedefrag")]
	d.refuse = refuseYes("activedefrag", "a test refusal")
	defer func() { d.refuse = nil }()
	c := New()
	err := c.Set([]string{"activedefrag", "yes"})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'activedefrag') - activedefrag yes is not supported: a test refusal", err.Error())
	assert.Equal(t, "no", c.String("activedefrag"))
	require.NoError(t, c.Set([]string{"activedefrag", "no"}))
}

// databases beyond what an expiry message can name is refused only while
// the expiry stream is on.
func TestLoadExpiryDatabasesBound(t *testing.T) {
	_, err := Load("", "databases 65536\nexpiry-zmq-endpoints tcp://127.0.0.1:5555\n")
	require.NoError(t, err)
	_, err = Load("", "databases 65537\n")
	require.NoError(t, err)
	_, err = Load("", "databases 65537\nexpiry-zmq-endpoints tcp://127.0.0.1:5555\n")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "databases 65537", ce.Text)
	assert.Contains(t, ce.Reason, "databases must be at most 65536")
}
