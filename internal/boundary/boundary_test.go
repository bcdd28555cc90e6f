package boundary

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "kubevirt.dev/virt/"

// A rule forbids the packages it covers some imports. Paths ending in "/..."
// name a subtree, others one package; module-relative paths start with no
// "kubevirt.dev/virt/", anything else is a full import path.
type rule struct {
	// doc is the package (module-relative) whose doc.go states the rule.
	doc string
	// covers are the packages the rule applies to.
	covers []string
	// forbid are the imports the rule refuses; "non-std" means every
	// import outside the standard library.
	forbid []string
	// allow are exceptions to forbid.
	allow []string
	// transitive: the rule holds for every dependency, not only for the
	// direct imports of the packages and their tests.
	transitive bool
	// only turns the rule around ("Only X imports it"): covers are then
	// the packages guarded, and only these may import them; "tests" means
	// _test.go files, packages under test/ and test-support packages
	// (named ...test, like net/http/httptest).
	only []string
}

// clients are the packages that talk to an API server.
var clients = []string{"generated/clientset/...", "k8s.io/client-go/kubernetes/...", "k8s.io/client-go/rest", "k8s.io/client-go/dynamic/..."}

var platform = []string{"apis/...", "apiserver/...", "controllers/...", "generated/...", "internal/...", "launcher/...", "node/..."}

var rules = []rule{
	// The components talk through the API and the launcher's contract.
	{doc: "node", covers: []string{"node/..."}, forbid: []string{"controllers/...", "apiserver/...", "launcher/..."},
		allow: []string{"launcher/api/v1", "launcher/layout"}},
	{doc: "node", covers: []string{"node/..."}, forbid: []string{"libvirt.org/go/libvirt"}, transitive: true},
	{doc: "controllers", covers: []string{"controllers/..."}, forbid: []string{"node/...", "apiserver/...", "launcher/..."},
		allow: []string{"launcher/layout"}},
	{doc: "controllers/virtualmachineinstance", covers: []string{"controllers/virtualmachineinstance"},
		forbid: []string{"node/...", "launcher/..."}, allow: []string{"launcher/layout"}},
	{doc: "launcher", covers: []string{"launcher/..."}, forbid: []string{"controllers/...", "node/...", "apiserver/..."}},
	{doc: "apiserver", covers: []string{"apiserver/..."}, forbid: []string{"controllers/...", "node/...", "launcher/..."}},

	{doc: "apiserver/guestaccess", covers: []string{"apiserver/guestaccess"}, forbid: []string{"apiserver/registry/...", "node/..."}},
	{doc: "apiserver/guestaccess/guestaccesstest", covers: []string{"apiserver/guestaccess/guestaccesstest"}, forbid: []string{"node/..."}},
	{doc: "virtctl", covers: []string{"virtctl/...", "cmd/virtctl"},
		forbid: []string{"apiserver/...", "controllers/...", "node/...", "launcher/...", "internal/..."}},

	// Shared vocabulary belongs to no component.
	{doc: "internal/apiclient", covers: []string{"internal/apiclient"}, forbid: []string{"controllers/...", "node/..."}},
	{doc: "internal/finalizer", covers: []string{"internal/finalizer"}, forbid: []string{"controllers/...", "node/..."}},
	{doc: "internal/vmipod", covers: []string{"internal/vmipod"}, forbid: []string{"controllers/...", "node/..."}},
	{doc: "internal/testpki", covers: []string{"internal/testpki"}, forbid: []string{"controllers/...", "node/..."}},
	{doc: "internal/ownership", covers: []string{"internal/ownership/..."}, forbid: []string{"controllers/...", "node/..."}},
	{doc: "internal/capability", covers: []string{"internal/capability"}, forbid: append([]string{"controllers/...", "node/..."}, clients...)},
	{doc: "internal/servingcert", covers: []string{"internal/servingcert"}, forbid: append([]string{"controllers/...", "node/...", "apiserver/..."}, clients...)},
	{doc: "internal/migrationcert", covers: []string{"internal/migrationcert"}, forbid: append([]string{"controllers/...", "node/...", "apiserver/..."}, clients...)},
	{doc: "controllers/certificate", covers: []string{"controllers/certificate"}, forbid: []string{"node/...", "apiserver/..."}},
	{doc: "controllers/nodefence", covers: []string{"controllers/nodefence"}, forbid: []string{"controllers/virtualmachineinstance",
		"controllers/virtualmachine", "controllers/replicaset", "controllers/launcherpod", "controllers/certificate", "controllers/manager"}},

	// The launcher's contract and what the node daemon may pull in.
	{doc: "launcher/api/v1", covers: []string{"launcher/api/v1"}, forbid: []string{"libvirt.org/...", "launcher/..."},
		allow: []string{"launcher/api/v1"}, transitive: true},
	{doc: "launcher/layout", covers: []string{"launcher/layout"}, forbid: platform},
	{doc: "launcher/hypervisor", covers: []string{"libvirt.org/go/libvirt"}, only: []string{"launcher/hypervisor"}},
	{doc: "launcher/kvm", covers: []string{"launcher/kvm"}, forbid: []string{"libvirt.org/go/libvirt"}, transitive: true},
	{doc: "launcher/domain", covers: []string{"launcher/domain"}, forbid: []string{"libvirt.org/go/libvirt"}, transitive: true},
	{doc: "launcher/hypervisor", covers: []string{"launcher/hypervisor"}, forbid: []string{"apis/..."}},
	{doc: "launcher/imagecopy", covers: []string{"launcher/imagecopy"}, forbid: append([]string{"libvirt.org/..."}, platform...),
		allow: []string{"launcher/layout", "launcher/termination"}, transitive: true},
	{doc: "launcher/termination", covers: []string{"launcher/termination"}, forbid: []string{"non-std"}},
	{doc: "launcher/screenshot", covers: []string{"launcher/screenshot"}, forbid: []string{"non-std"}},
	{doc: "launcher/dhcp", covers: []string{"launcher/dhcp"}, forbid: append([]string{"libvirt.org/go/libvirt"}, platform...),
		allow: []string{"launcher/api/v1"}},
	{doc: "launcher/lease", covers: []string{"launcher/lease"}, forbid: []string{"libvirt.org/go/libvirt", "launcher/hypervisor"}, transitive: true},
	{doc: "launcher/guestagent", covers: []string{"launcher/guestagent"}, forbid: []string{"libvirt.org/go/libvirt"}},
	{doc: "launcher/supervisor", covers: []string{"launcher/supervisor"}, forbid: []string{"libvirt.org/go/libvirt"}},
	{doc: "node/network/netutil", covers: []string{"node/network/netutil"},
		forbid: []string{"node/network/masquerade", "node/network/bridge", "apis/..."}},
	{doc: "node/network/bridge", covers: []string{"node/network/bridge"}, forbid: []string{"node/..."},
		allow: []string{"node/network", "node/network/netutil", "node/network/internal/..."}},
	{doc: "node/network/masquerade", covers: []string{"node/network/masquerade"}, forbid: []string{"node/..."},
		allow: []string{"node/network", "node/network/netutil", "node/network/internal/..."}},
	{doc: "node/fakelauncher", covers: []string{"node/fakelauncher"}, only: []string{"tests"}},
	{doc: "internal/testpki", covers: []string{"internal/testpki"}, only: []string{"tests"}},

	// The API and its storage know no clients.
	{doc: "apis/virtualization", covers: []string{"apis/virtualization"},
		only: []string{"apis/...", "apiserver/...", "internal/instancetype", "bench/webhook", "tests"}},
	{doc: "apis/virtualization/validation", covers: []string{"apis/virtualization/validation"},
		forbid: append([]string{"apiserver/..."}, clients...)},
	{doc: "apiserver/registry/virtualmachineinstance", covers: []string{"apiserver/registry/virtualmachineinstance"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachine", covers: []string{"apiserver/registry/virtualmachine"},
		forbid: clients},
	{doc: "apiserver/registry/instancetypetable", covers: []string{"apiserver/registry/instancetypetable"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachineclusterinstancetype", covers: []string{"apiserver/registry/virtualmachineclusterinstancetype"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachineclusterpreference", covers: []string{"apiserver/registry/virtualmachineclusterpreference"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachineinstancereplicaset", covers: []string{"apiserver/registry/virtualmachineinstancereplicaset"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachineinstancetype", covers: []string{"apiserver/registry/virtualmachineinstancetype"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachineinstancemigration", covers: []string{"apiserver/registry/virtualmachineinstancemigration"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachinepreference", covers: []string{"apiserver/registry/virtualmachinepreference"},
		forbid: clients},
	{doc: "apiserver/registry/virtualmachineinstancetyperevision", covers: []string{"apiserver/registry/virtualmachineinstancetyperevision"},
		forbid: clients},
	{doc: "apiserver/patchguard", covers: []string{"apiserver/patchguard"}, forbid: clients},
	{doc: "internal/instancetype", covers: []string{"internal/instancetype"},
		forbid: append([]string{"apiserver/...", "controllers/..."}, clients...)},

	// Small leaves that stand alone.
	{doc: "node/socket", covers: []string{"node/socket"}, forbid: platform},
	{doc: "node/podfs", covers: []string{"node/podfs"}, forbid: platform, allow: []string{"launcher/layout"}},
	{doc: "controllers/expectation", covers: []string{"controllers/expectation"}, forbid: platform},

	// KubeVirt's manifests and what the platform does with them, for any test.
	{doc: "test/compat", covers: []string{"test/compat"}, forbid: platform},

	// What the tests send and how they load the cluster stand apart from
	// the components.
	{doc: "test/badinput", covers: []string{"test/badinput"}, forbid: platform, allow: []string{"apis/..."}},
	{doc: "test/reliability/load", covers: []string{"test/reliability/load"}, forbid: append([]string{"test/e2e/..."}, platform...),
		allow: []string{"apis/virtualization/v1", "generated/clientset/..."}},

	// The benchmarks (bench/, a module of its own) measure the platform
	// from outside, reusing only its plumbing.
	{doc: "bench/webhook", covers: []string{"bench/webhook"}, forbid: platform, allow: []string{"apis/..."}},
	{doc: "bench/rawguest", covers: []string{"bench/rawguest"},
		forbid: []string{"node/network/masquerade", "node/network/bridge", "bench/..."}},
	{doc: "bench/console", covers: []string{"bench/console"}, forbid: []string{"node/..."}, allow: []string{"node/podfs"}},

	// The end-to-end tests see the platform as a user does.
	{doc: "test/e2e/framework", covers: []string{"test/e2e/framework"},
		forbid: []string{"controllers/...", "node/...", "launcher/...", "apiserver/...", "internal/..."},
		allow:  []string{"launcher/layout", "launcher/domain"}},
}

// stated finds the sentences of a doc.go that state an import rule: what a
// package must not import ("must not import", "imports nothing of",
// "imports X only, never Y", "imports X; nothing of Y") and who alone may
// import it ("Only X imports it", "the only package that imports X").
var stated = regexp.MustCompile(`(?i)(must not|never|does not) import|imports? nothing|import neither|imports only|imports none|` +
	`\bonly\b[^.;]{0,250} imports? it\b|the only package\b[^.;]* imports\b|` +
	`\bimports?\b[^.;]{0,80}\bonly, never\b|\bimports?\b[^.]{0,200}\bnothing of\b`)

type pkg struct {
	path    string // module-relative
	imports []string
	// testImports are the imports of its _test.go files alone.
	testImports []string
	deps        []string
}

func TestImportRules(t *testing.T) {
	touchSources(t)
	pkgs := list(t)
	if _, ok := pkgs["bench/webhook"]; !ok {
		t.Fatal("go list did not reach bench/, the benchmarks' module")
	}
	for _, r := range rules {
		if r.only != nil {
			for _, v := range importerViolations(r, pkgs) {
				t.Error(v)
			}
			continue
		}
		for _, p := range pkgs {
			if !matchesAny(module+p.path, r.covers) {
				continue
			}
			imports := slices.Concat(p.imports, p.testImports)
			if r.transitive {
				imports = p.deps
			}
			for _, imp := range imports {
				if imp != module+p.path && forbidden(imp, r) {
					t.Errorf("%s imports %s, which %s/doc.go forbids", p.path, imp, r.doc)
				}
			}
		}
	}
}

// importerViolations holds an "Only X imports it" rule: every package that
// imports one the rule covers must be one of X.
func importerViolations(r rule, pkgs map[string]pkg) []string {
	var out []string
	for _, p := range pkgs {
		if matchesAny(module+p.path, r.covers) || matchesAny(module+p.path, r.only) {
			continue
		}
		imports := p.imports
		if slices.Contains(r.only, "tests") {
			if isTestSupport(p.path) {
				continue
			}
		} else {
			imports = slices.Concat(p.imports, p.testImports)
		}
		for _, imp := range imports {
			if matchesAny(imp, r.covers) {
				out = append(out, fmt.Sprintf("%s imports %s, which %s/doc.go lets only %s import", p.path, imp, r.doc, strings.Join(r.only, ", ")))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestImporterRuleCatches proves an "Only X imports it" row finds a
// stranger, tells a test from code, and lets X through.
func TestImporterRuleCatches(t *testing.T) {
	r := rule{doc: "apis/virtualization", covers: []string{"apis/virtualization"}, only: []string{"apiserver/...", "tests"}}
	internal := module + "apis/virtualization"
	pkgs := map[string]pkg{
		"apiserver/registry/x":  {path: "apiserver/registry/x", imports: []string{internal}},
		"internal/instancetype": {path: "internal/instancetype", imports: []string{internal}},
		"node/vmi":              {path: "node/vmi", testImports: []string{internal}},
		"node/vmi/vmitest":      {path: "node/vmi/vmitest", imports: []string{internal}},
		"test/e2e":              {path: "test/e2e", imports: []string{internal}},
		"bench/webhook":         {path: "bench/webhook", imports: []string{internal + "/v1", internal + "/validation"}},
	}
	got := importerViolations(r, pkgs)
	want := []string{"internal/instancetype imports " + internal + ", which apis/virtualization/doc.go lets only apiserver/..., tests import"}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r.only = []string{"apiserver/..."}
	if got := importerViolations(r, pkgs); len(got) != 4 {
		t.Errorf("without tests allowed, want the code, the test, the test-support package and test/e2e refused, got %q", got)
	}
}

// isTestSupport: packages under test/ and those named ...test exist for
// tests only.
func isTestSupport(path string) bool {
	return path == "test" || strings.HasPrefix(path, "test/") || strings.HasSuffix(filepath.Base(path), "test")
}

// TestEveryStatedRuleIsChecked keeps the table and the doc.go files saying
// the same: a doc.go that states an import rule has a row, a row has a
// doc.go that states it.
func TestEveryStatedRuleIsChecked(t *testing.T) {
	docs := statedRules(t)
	inTable := map[string]bool{}
	for _, r := range rules {
		inTable[r.doc] = true
	}
	for rel, sentences := range docs {
		if (len(sentences) > 0) != inTable[rel] {
			if inTable[rel] {
				t.Errorf("the table checks an import rule for %s, but its doc.go states none", rel)
			} else {
				t.Errorf("%s/doc.go states an import rule the table does not check: %q", rel, sentences)
			}
		}
		delete(inTable, rel)
	}
	for doc := range inTable {
		t.Errorf("the table names %s, which has no doc.go", doc)
	}
}

// statedRules reads every doc.go of the project's own modules: by package
// (module-relative), the sentences that state an import rule, none for a
// doc.go that states no rule.
func statedRules(t *testing.T) map[string][]string {
	t.Helper()
	root := moduleRoot(t)
	docs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root ||
			strings.HasPrefix(rel, "hack/") && !strings.HasPrefix(rel, "hack/mkimage")) {
			return filepath.SkipDir // no packages of ours
		}
		if d.Name() != "doc.go" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel = filepath.Dir(rel)
		if rel == "internal/boundary" {
			return nil // this package's doc.go quotes the rules it checks
		}
		docs[rel] = nil
		for _, s := range sentences(string(prose(docComment(raw)))) {
			if stated.MatchString(s) {
				docs[rel] = append(docs[rel], s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := docs["bench/webhook"]; !ok {
		t.Fatal("found no doc.go in bench/")
	}
	return docs
}

// docComment is the comment lines of a doc.go without code generators'
// tags (// +k8s:...).
func docComment(src []byte) []byte {
	var lines []string
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "//") && !strings.HasPrefix(line, "// +") {
			lines = append(lines, line)
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// sentences splits prose at a full stop followed by a space and a letter.
func sentences(prose string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(prose); i++ {
		c := prose[i+2] | 0x20
		if prose[i] == '.' && prose[i+1] == ' ' && c >= 'a' && c <= 'z' {
			out = append(out, prose[start:i+1])
			start = i + 2
		}
	}
	return append(out, prose[start:])
}

// prose is a doc comment as one line of words, so a rule broken across
// comment lines is found.
func prose(src []byte) []byte {
	var words []string
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "//")
		words = append(words, strings.Fields(line)...)
	}
	return []byte(strings.Join(words, " "))
}

func forbidden(imp string, r rule) bool {
	if matchesAny(imp, r.allow) {
		return false
	}
	if slices.Contains(r.forbid, "non-std") {
		return !isStd(imp)
	}
	return matchesAny(imp, r.forbid)
}

// matchesAny reports whether the import path matches a pattern. A pattern
// whose first element has no dot is module-relative.
func matchesAny(path string, patterns []string) bool {
	for _, p := range patterns {
		if isStd(p) {
			p = module + p
		}
		if tree, ok := strings.CutSuffix(p, "/..."); ok {
			if path == tree || strings.HasPrefix(path, tree+"/") {
				return true
			}
		} else if path == p {
			return true
		}
	}
	return false
}

// isStd: the standard library's import paths have no dot in their first
// element.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// modules are the project's Go modules of its own code: the platform, the
// benchmarks and the image builder (hack/etcd, hack/coredns and hack/kube
// only build upstream binaries).
var modules = []string{".", "bench", "hack/mkimage"}

// list runs go list over each module once: each package's direct imports
// (its own and its tests') and its transitive dependencies.
func list(t *testing.T) map[string]pkg {
	t.Helper()
	pkgs := map[string]pkg{}
	for _, dir := range modules {
		cmd := exec.Command("go", "list", "-f",
			"{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}\t{{join .Deps \" \"}}", "./...")
		cmd.Dir = filepath.Join(moduleRoot(t), dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		n := 0
		for sc.Scan() {
			f := strings.Split(sc.Text(), "\t")
			if len(f) != 4 {
				t.Fatalf("go list: unexpected line %q", sc.Text())
			}
			rel, _ := strings.CutPrefix(f[0], module)
			pkgs[rel] = pkg{path: rel, imports: strings.Fields(f[1]), testImports: strings.Fields(f[2]), deps: strings.Fields(f[3])}
			n++
		}
		if n == 0 {
			t.Fatalf("go list found %d packages in %s: not this project", n, dir)
		}
	}
	return pkgs
}

// touchSources stats every Go file and go.mod of the module. go test caches a
// result by the files the test itself looked at; go list reads them in
// another process, so without this an import added anywhere would be
// answered by a cached pass.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(moduleRoot(t), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}
