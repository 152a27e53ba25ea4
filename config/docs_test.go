package config

import (
	"os"
	"regexp"
	"strings"
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

// The generated lists of docs/configuration.md (no effect, refused,
// pending) match the table.
// ZREDIS_UPDATE_DOCS=1 go test -run TestDocsDirectiveLists ./config/
// rewrites them.
func TestDocsDirectiveLists(t *testing.T) {
	const page = "../docs/configuration.md"
	raw, err := os.ReadFile(page)
	require.NoError(t, err)
	text := string(raw)
	for name, want := range DocBlocks() {
		re := regexp.MustCompile(`(?s)(<!-- ` + name + `:begin -->)(.*?)(<!-- ` + name + `:end -->)`)
		m := re.FindStringSubmatch(text)
		require.NotNil(t, m, "%s lacks the %s block", page, name)
		if os.Getenv("ZREDIS_UPDATE_DOCS") != "" {
			text = re.ReplaceAllLiteralString(text, m[1]+want+m[3])
			continue
		}
		assert.Equal(t, want, m[2], "%s %s block (ZREDIS_UPDATE_DOCS=1 regenerates it)", page, name)
	}
	if os.Getenv("ZREDIS_UPDATE_DOCS") != "" {
		require.NoError(t, os.WriteFile(page, []byte(text), 0o644))
	}
}

// The table of zredis's own directives in docs/configuration.md names
// each of them, and no other.
func TestDocsOwnDirectives(t *testing.T) {
	const page = "../docs/configuration.md"
	raw, err := os.ReadFile(page)
	require.NoError(t, err)
	text := string(raw)
	start := strings.Index(text, "## zredis's own directives")
	require.NotEqual(t, -1, start, "%s lacks the section of zredis's own directives", page)
	section := text[start:]
	if end := strings.Index(section[1:], "\n## "); end != -1 {
		section = section[:end+1]
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)").FindAllStringSubmatch(section, -1) {
		listed = append(listed, m[1])
	}
	var own []string
	for _, d := range Directives() {
		if d.ZRedis {
			own = append(own, d.Name)
		}
	}
	assert.ElementsMatch(t, own, listed, "%s: the table of zredis's own directives", page)
}

// A value zredis refuses stops the load, naming the line that set it
// last; a later line that sets a value zredis honours wins, as a
// command-line override does.
func TestLoadRefusesUnsupportedValues(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/z.conf"
	require.NoError(t, os.WriteFile(file, []byte("port 7000\ntls-ciphers DEFAULT\n"), 0o644))
	_, err := Load(file, "")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Line)
	assert.Equal(t, "tls-ciphers DEFAULT", ce.Text)
	assert.Contains(t, err.Error(), "tls-ciphers cannot be applied")

	_, err = Load(file, "tls-ciphers \"\"\n")
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
