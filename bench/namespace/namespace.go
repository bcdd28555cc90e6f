package namespace

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Label marks the benchmarks' namespaces.
const Label = "bench.kubevirt.io/owned"

// Create makes a fresh namespace called name (which must start with
// "bench-"), deleting one of that name left by an earlier run first.
func Create(ctx context.Context, kube kubernetes.Interface, name string) error {
	if !strings.HasPrefix(name, "bench-") {
		return fmt.Errorf("namespace %q: the benchmarks only use bench-* namespaces", name)
	}
	if err := Delete(ctx, kube, 3*time.Minute, name); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{Label: "true"}}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// Delete deletes the namespaces and waits up to timeout for them to be gone.
func Delete(ctx context.Context, kube kubernetes.Interface, timeout time.Duration, names ...string) error {
	for _, n := range names {
		err := kube.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete namespace %s: %w", n, err)
		}
	}
	for _, n := range names {
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			_, err := kube.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			return fmt.Errorf("namespace %s still there after %s: %w", n, timeout, err)
		}
	}
	return nil
}
