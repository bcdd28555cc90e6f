package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"kubevirt.dev/virt/test/compat"
)

// TestKubeVirtManifests holds issue 18's promise on the real cluster: every
// KubeVirt manifest of test/compat, with only its apiVersion changed, goes
// through the user's kubectl (create --dry-run=server, strict field
// validation by default) to the kube-apiserver and through the aggregator
// to virt-apiserver, and is created, or refused with a 422 whose causes are
// exactly the fields and reasons its header names. None is answered with
// "unknown field": the schema knows every field of KubeVirt's.
func TestKubeVirtManifests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	manifests, err := compat.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 30 {
		t.Fatalf("%d manifests; the compatibility suite keeps at least 30", len(manifests))
	}
	for _, m := range manifests {
		t.Run(m.Name, func(t *testing.T) {
			res := kubectlInput(ctx, t, m.Moved(), "create", "--dry-run=server", "-n", ns, "-f", "-", "-v=6")
			if strings.Contains(res.stdout+res.stderr, "unknown field") {
				t.Errorf("kubectl reports an unknown field:\n%s", res.stderr)
			}
			if m.Accepted && len(m.Needs) > 0 && res.code != 0 {
				// Taken only where a Ready node reports the capability; a
				// refusal must name it.
				for _, need := range m.Needs {
					if !strings.Contains(res.stderr, "needs node capability "+need) {
						t.Errorf("refused without naming node capability %s:\n%s", need, kubectlErrors(res.stderr))
					}
				}
			} else if m.Accepted {
				if res.code != 0 || !strings.Contains(res.stdout, " created (server dry run)") {
					t.Fatalf("kubectl create --dry-run=server exited %d, want the manifest created:\n%s%s", res.code, res.stdout, kubectlErrors(res.stderr))
				}
			} else {
				wantRefused(t, res, m.Refusals)
			}
			for _, want := range m.Warnings {
				if !slices.ContainsFunc(kubectlWarnings(res.stderr), func(w string) bool { return strings.Contains(w, want) }) {
					t.Errorf("no warning contains %q; kubectl printed:\n%s", want, kubectlErrors(res.stderr))
				}
			}
		})
	}

	// The check above can fail: the same path answers a misspelt field of a
	// moved manifest with "unknown field".
	t.Run("a misspelt field is an unknown field", func(t *testing.T) {
		broken := bytes.Replace(manifests[0].Moved(), []byte("\nspec:\n"), []byte("\nspec:\n  notAField: 1\n"), 1)
		res := kubectlInput(ctx, t, broken, "create", "--dry-run=server", "-n", ns, "-f", "-")
		if res.code == 0 || !strings.Contains(res.stderr, "unknown field") || !strings.Contains(res.stderr, "notAField") {
			t.Errorf("kubectl create of a manifest with spec.notAField exited %d:\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
}

// wantRefused wants kubectl to have failed on a 422 (reason Invalid) with
// one cause at each expected path saying what the expectation says, and no
// other cause.
func wantRefused(t *testing.T, res kubectlResult, want []compat.Refusal) {
	t.Helper()
	errs := kubectlErrors(res.stderr)
	// -v=6 logs each response's status; kubectl says "is invalid" for a
	// Status of reason Invalid.
	if res.code == 0 || !strings.Contains(res.stderr, "422 Unprocessable Entity") || !strings.Contains(errs, " is invalid: ") {
		t.Fatalf("kubectl create --dry-run=server exited %d, want a 422 refusal:\n%s%s", res.code, res.stdout, errs)
	}
	causes := invalidCauses(errs)
	for _, r := range want {
		i := slices.IndexFunc(causes, func(c string) bool {
			return strings.HasPrefix(c, r.Path+": ") && strings.Contains(c, r.Message)
		})
		if i < 0 {
			t.Errorf("no cause at %s saying %q; kubectl printed:\n%s", r.Path, r.Message, errs)
			continue
		}
		causes = slices.Delete(causes, i, i+1)
	}
	for _, c := range causes {
		t.Errorf("unexpected cause: %s", c)
	}
}

// invalidCauses splits kubectl's message of a 422 into its causes, each
// "<path>: <type>: <detail>": on the line of `The <Kind> "<name>" is
// invalid: ` when there is one, as "* " lines below it when there are more.
func invalidCauses(errs string) []string {
	var causes []string
	for _, line := range strings.Split(errs, "\n") {
		if _, rest, ok := strings.Cut(line, " is invalid: "); ok {
			if rest = strings.TrimSpace(rest); rest != "" {
				causes = append(causes, rest)
			}
			continue
		}
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "* "); ok {
			causes = append(causes, c)
		}
	}
	return causes
}

// kubectlErrors is kubectl's standard error without the -v=6 log lines
// (klog's "I0102 15:04:05.000000 ..." header).
func kubectlErrors(stderr string) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if len(line) > 5 && strings.ContainsRune("IWEF", rune(line[0])) && line[1] >= '0' && line[1] <= '9' && line[5] == ' ' {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// kubectlWarnings are the API warnings kubectl printed ("Warning: ...").
func kubectlWarnings(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if w, ok := strings.CutPrefix(line, "Warning: "); ok {
			out = append(out, w)
		}
	}
	return out
}

type kubectlResult struct {
	code           int
	stdout, stderr string
}

// kubectlInput runs the cluster's kubectl as the admin with input on its
// standard input (-f -), as a user pipes a manifest, and returns how it
// ended.
func kubectlInput(ctx context.Context, t *testing.T, input []byte, args ...string) kubectlResult {
	t.Helper()
	cmd := exec.CommandContext(ctx, cluster.KubectlPath, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	cmd.Dir = cluster.Root
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return kubectlResult{stdout: stdout.String(), stderr: stderr.String()}
	case errors.As(err, &exit):
		return kubectlResult{code: exit.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	default:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
		return kubectlResult{}
	}
}
