package boundary

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rulesSection is the heading of docs/architecture.md's list of the import
// rules: one table row per package, its doc.go's rule sentences verbatim.
const rulesSection = "## Import rules"

// TestArchitectureListsTheRules keeps docs/architecture.md's list of import
// rules the same text as the doc.go files the table above checks: a rule
// added, changed or dropped in a doc.go fails here until the architecture
// says the same.
func TestArchitectureListsTheRules(t *testing.T) {
	want := map[string]string{}
	for pkg, sentences := range statedRules(t) {
		if len(sentences) > 0 {
			want[pkg] = strings.Join(sentences, " ")
		}
	}
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := rulesTable(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if maps.Equal(got, want) {
		return
	}
	for _, pkg := range slices.Sorted(maps.Keys(want)) {
		if got[pkg] != want[pkg] {
			t.Errorf("docs/architecture.md's rule for %s is %q; its doc.go says %q", pkg, got[pkg], want[pkg])
		}
	}
	for pkg := range got {
		if _, ok := want[pkg]; !ok {
			t.Errorf("docs/architecture.md lists a rule for %s, whose doc.go states none", pkg)
		}
	}
	var b strings.Builder
	b.WriteString("| package | rule (its doc.go) |\n|---|---|\n")
	for _, pkg := range slices.Sorted(maps.Keys(want)) {
		fmt.Fprintf(&b, "| `%s` | %s |\n", pkg, want[pkg])
	}
	t.Logf("the section's table as the doc.go files say it:\n%s", b.String())
}

// rulesTable reads the rows "| `package` | rule |" of the section.
func rulesTable(doc string) (map[string]string, error) {
	_, section, ok := strings.Cut(doc, "\n"+rulesSection+"\n")
	if !ok {
		return nil, fmt.Errorf("docs/architecture.md has no section %q", rulesSection)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 2 {
			continue
		}
		pkg := strings.TrimSpace(cells[0])
		if !strings.HasPrefix(pkg, "`") {
			continue // the header and its rule
		}
		rows[strings.Trim(pkg, "`")] = strings.TrimSpace(cells[1])
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("the section %q has no rows", rulesSection)
	}
	return rows, nil
}
