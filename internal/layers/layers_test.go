package layers

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/closer-lab/closer/"

// rules reads the package table of docs/architecture.md: rows of the form
// | `pkg` | job | `a`, `b` | — the third column lists the module's packages
// pkg may import ("—" for none).
func rules(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9/]+)` \\|[^|]*\\|([^|]*)\\|\\s*$")
	name := regexp.MustCompile("`([a-z0-9/]+)`")
	out := map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if _, dup := out[m[1]]; dup {
			t.Errorf("docs/architecture.md lists %s twice", m[1])
		}
		allowed := map[string]bool{}
		for _, n := range name.FindAllStringSubmatch(m[2], -1) {
			allowed[n[1]] = true
		}
		out[m[1]] = allowed
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no package table in docs/architecture.md")
	}
	return out
}

// imports lists each package of the module with the module's packages it
// imports (not its tests' imports), from go list.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				graph[pkg] = append(graph[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	return graph
}

// TestImportsFollowArchitecture fails when a package imports a package of
// the module that docs/architecture.md does not allow it, when a package is
// missing from the document, or the document names a package that is gone.
func TestImportsFollowArchitecture(t *testing.T) {
	t.Parallel()
	allowed, graph := rules(t), imports(t)
	var pkgs []string
	for pkg := range graph {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		may, ok := allowed[pkg]
		if !ok {
			t.Errorf("%s is not in docs/architecture.md's package table", pkg)
			continue
		}
		for _, imp := range graph[pkg] {
			if !may[imp] {
				t.Errorf("%s imports %s, which docs/architecture.md does not allow it", pkg, imp)
			}
		}
	}
	for pkg := range allowed {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("docs/architecture.md lists %s, which is not a package of the module", pkg)
		}
	}
}

// The algorithm packages are pure: they import nothing of the store, the
// web front, the jobs or the page templates, whatever the table says.
func TestAlgorithmsImportNoStoreOrWeb(t *testing.T) {
	t.Parallel()
	graph := imports(t)
	pure := []string{"internal/triplet", "internal/kernel", "internal/embed", "internal/dimension", "internal/uncertainty", "internal/projection", "internal/landmark", "internal/basis", "internal/active", "internal/design", "internal/analysis", "internal/simulate"}
	var forbidden = regexp.MustCompile(`^(internal/(collect|store|account|web|plot|recompute|purge|jobqueue|pgtest|dbmigrate)|templates|static|migrations|cmd/)`)
	for _, pkg := range pure {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("%s is not a package any more: update this test", pkg)
		}
		for _, imp := range graph[pkg] {
			if forbidden.MatchString(imp) {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// The domain vocabulary stands alone (issue 25): study imports no database
// driver and no HTTP, and the packages that only show, draw or carry a
// study (the pages, the dashboard's figures, the study files) reach the
// store through the vocabulary and interfaces, never by importing it. No
// package is named after a standard library package it would shadow.
func TestVocabularyStandsAlone(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	noStore := map[string]bool{"templates": true, "internal/dashboard": true, "internal/studyfile": true, "internal/study": true}
	shadowed := map[string]bool{"http": true, "sql": true, "json": true, "errors": true, "context": true, "testing": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, name, imps := strings.TrimPrefix(fields[0], module), fields[1], fields[2:]
		if shadowed[name] {
			t.Errorf("%s is package %s, which shadows the standard library's", pkg, name)
		}
		for _, imp := range imps {
			if noStore[pkg] && (imp == module+"internal/collect" || imp == module+"internal/store" || imp == module+"internal/account") {
				t.Errorf("%s imports %s", pkg, imp)
			}
			if pkg == "internal/study" && (strings.HasPrefix(imp, "github.com/jackc/") || strings.HasPrefix(imp, "net/http") || strings.HasPrefix(imp, "database/")) {
				t.Errorf("internal/study imports %s", imp)
			}
		}
	}
}
