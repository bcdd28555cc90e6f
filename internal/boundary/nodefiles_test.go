package boundary

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// virt-handler is root on the node and every name below a launcher pod's
// directory is the tenant's: it reaches a pod's files only through
// node/podfs (no symlink, the file's type checked, reads capped, the
// socket's peer checked). TestNodeFileAccess holds node/ to that: a
// non-test file under node/ that touches the file system by path, or dials
// or listens on a unix socket by path, fails it, unless it is one of the
// places below, each of which works on the handler's own files, never a
// pod's.
var nodeFileAccessAllowed = map[string]string{
	"node/podfs":                    "the one way into a pod's files; it confines and bounds every access",
	"node/hostpath":                 "the launchers' QEMU capabilities cache, a hostPath of the node's own that the handler creates and hands to the launchers' user, opened O_NOFOLLOW",
	"node/deviceplugin":             "the kubelet's device-plugin directory (kubelet.sock and the plugin's own socket), a host directory only root writes",
	"node/guestaccess/tls.go":       "the handler's guest-access certificate directory, a secret mounted into its own pod",
	"node/migrationproxy/tls.go":    "the migration CA, a ConfigMap mounted into the handler's own pod",
	"node/nodelabel/facts.go":       "the node's facts, written by the handler's own init container (the launcher image) into an emptyDir of its own pod that the handler mounts read-only; read once, capped",
	"node/socket":                   "listens at a path for tests (the fake launchers); virt-handler does not import it",
	"node/fakelauncher":             "plays the launcher in tests: it writes the pod's files as the launcher would",
	"node/network/internal/nettest": "test support: the test's own network namespace's sysctls and /dev/net/tun",
}

// fileAccess are the functions that take a path, by import path. A package
// not listed is not checked; a function not listed of a listed package is
// allowed.
var fileAccess = map[string][]string{
	"os": {"Open", "OpenFile", "OpenRoot", "OpenInRoot", "Create", "CreateTemp", "ReadFile", "WriteFile", "ReadDir",
		"Stat", "Lstat", "Remove", "RemoveAll", "Rename", "Chown", "Lchown", "Chmod", "Chtimes", "Truncate",
		"Mkdir", "MkdirAll", "MkdirTemp", "Readlink", "Symlink", "Link", "DirFS", "CopyFS"},
	"io/ioutil":     {"ReadFile", "WriteFile", "ReadDir", "TempFile", "TempDir"},
	"path/filepath": {"Walk", "WalkDir", "Glob", "EvalSymlinks"},
	"golang.org/x/sys/unix": {"Open", "Openat", "Openat2", "Creat", "Stat", "Lstat", "Fstatat", "Statx", "Access", "Faccessat",
		"Unlink", "Unlinkat", "Rmdir", "Rename", "Renameat", "Renameat2", "Chown", "Lchown", "Fchownat", "Chmod", "Fchmodat",
		"Mkdir", "Mkdirat", "Mknod", "Mknodat", "Mkfifo", "Readlink", "Readlinkat", "Symlink", "Link", "Linkat", "Truncate",
		"Connect", "Bind"},
	"syscall": {"Open", "Openat", "Creat", "Stat", "Lstat", "Access", "Unlink", "Unlinkat", "Rmdir", "Rename", "Renameat",
		"Chown", "Lchown", "Fchownat", "Chmod", "Mkdir", "Mkdirat", "Mknod", "Mknodat", "Readlink", "Symlink", "Link",
		"Truncate", "Connect", "Bind"},
	"net": {"DialUnix", "ListenUnix", "ListenUnixgram"},
	// Take a file's path.
	"crypto/tls":                 {"LoadX509KeyPair"},
	"k8s.io/client-go/util/cert": {"NewPool", "CertsFromFile"},
}

// unixNetworks are the networks of net.Dial, net.Listen, (*net.Dialer).Dial
// and the like whose address is a path.
var unixNetworks = []string{"unix", "unixgram", "unixpacket"}

func TestNodeFileAccess(t *testing.T) {
	root := moduleRoot(t)
	var files int
	err := filepath.WalkDir(filepath.Join(root, "node"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if allowedFileAccess(rel) {
			return nil
		}
		files++
		for _, use := range pathUses(t, path) {
			t.Errorf("%s:%s: virt-handler reaches files by path only through node/podfs (or a place internal/boundary allows with a reason)", rel, use)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("checked only %d files under node/", files)
	}
}

// TestNodeFileAccessCatches proves the check finds what it must.
func TestNodeFileAccessCatches(t *testing.T) {
	src := `package p
import (
	"context"
	"net"
	fs "os"
	"golang.org/x/sys/unix"
)
func f(ctx context.Context, d *net.Dialer) {
	_, _ = fs.ReadFile("/var/lib/kubelet/pods/x/domain.final.json")
	_, _ = unix.Open("x", unix.O_RDONLY, 0)
	_, _ = net.Dial("unix", "x.sock")
	_, _ = d.DialContext(ctx, "unix", "x.sock")
	_, _ = net.Dial("tcp", "198.18.0.1:80")
	_ = fs.Getenv("HOME")
}
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := pathUses(t, path)
	want := []string{"9: os.ReadFile", "10: golang.org/x/sys/unix.Open", "11: net.Dial(\"unix\")", "12: DialContext(\"unix\")"}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
	if allowedFileAccess("node/podfsx/a.go") || !allowedFileAccess("node/podfs/podfs.go") || !allowedFileAccess("node/guestaccess/tls.go") || allowedFileAccess("node/guestaccess/console.go") {
		t.Error("the allow-list matches other packages or files than it names")
	}
}

func allowedFileAccess(rel string) bool {
	rel = filepath.ToSlash(rel)
	if _, ok := nodeFileAccessAllowed[rel]; ok {
		return true
	}
	_, ok := nodeFileAccessAllowed[filepath.ToSlash(filepath.Dir(rel))]
	return ok
}

// pathUses lists a file's calls that take a path, as "line: what".
func pathUses(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	// The file's names of the checked packages.
	names := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := fileAccess[p]; !ok && p != "net" {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var uses []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		line := fset.Position(call.Pos()).Line
		if id, ok := sel.X.(*ast.Ident); ok {
			if p, ok := names[id.Name]; ok {
				if slices.Contains(fileAccess[p], sel.Sel.Name) {
					uses = append(uses, fmt.Sprintf("%d: %s.%s", line, p, sel.Sel.Name))
					return true
				}
				if p == "net" && unixNetwork(call) {
					uses = append(uses, fmt.Sprintf("%d: net.%s(%q)", line, sel.Sel.Name, networkOf(call)))
				}
				return true
			}
		}
		// A method such as (*net.Dialer).DialContext or
		// (*net.ListenConfig).Listen with a unix network.
		if strings.HasPrefix(sel.Sel.Name, "Dial") || strings.HasPrefix(sel.Sel.Name, "Listen") {
			if unixNetwork(call) {
				uses = append(uses, fmt.Sprintf("%d: %s(%q)", line, sel.Sel.Name, networkOf(call)))
			}
		}
		return true
	})
	return uses
}

// unixNetwork reports whether one of the call's first two arguments is a
// literal unix network (the network follows a context in the methods).
func unixNetwork(call *ast.CallExpr) bool { return networkOf(call) != "" }

func networkOf(call *ast.CallExpr) string {
	for i, a := range call.Args {
		if i > 1 {
			break
		}
		if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, _ := strconv.Unquote(lit.Value); slices.Contains(unixNetworks, s) {
				return s
			}
		}
	}
	return ""
}
