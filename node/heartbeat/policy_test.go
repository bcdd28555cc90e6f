package heartbeat

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// policy compiles the node restriction the kube-apiserver enforces on the
// handler (artifacts/virt-handler/node-restriction.yaml) the way its
// ValidatingAdmissionPolicy plugin does, so that its expressions and this
// package's writes are checked together without a cluster. The e2e test
// TestHandlerNodeRestriction checks the same on the real kube-apiserver.
func policy(t *testing.T) validating.Validator {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "artifacts", "virt-handler", "node-restriction.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	if err := yaml.Unmarshal([]byte(strings.Split(string(raw), "\n---\n")[0]), &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "ValidatingAdmissionPolicy" {
		t.Fatalf("the first document is a %s", p.Kind)
	}
	vars := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	var variables []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		variables = append(variables, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(variables, vars, environment.StoredExpressions)
	var match []plugincel.ExpressionAccessor
	for i := range p.Spec.MatchConditions {
		match = append(match, (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]))
	}
	var validations, messages []plugincel.ExpressionAccessor
	for _, v := range p.Spec.Validations {
		validations = append(validations, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		if v.MessageExpression != "" {
			messages = append(messages, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
		} else {
			messages = append(messages, nil)
		}
	}
	matcher := matchconditions.NewMatcher(compiler.CompileCondition(match, vars, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	v := validating.NewValidator(compiler.CompileCondition(validations, vars, environment.StoredExpressions), matcher,
		compiler.CompileCondition(nil, vars, environment.StoredExpressions),
		compiler.CompileCondition(messages, plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions), p.Spec.FailurePolicy, nil)
	if err := v.CompileError(); err != nil {
		t.Fatal(err)
	}
	return v
}

// admit runs v on a request and returns nil or the denial's message.
func admit(t *testing.T, v validating.Validator, u user.Info, op admission.Operation, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind,
	ns, name, sub string, obj, old kruntime.Object) []string {
	t.Helper()
	for _, o := range []kruntime.Object{obj, old} {
		if o != nil {
			o.GetObjectKind().SetGroupVersionKind(gvk)
		}
	}
	attrs := admission.NewAttributesRecord(obj, old, gvk, ns, name, gvr, sub, op, nil, false, u)
	versioned, err := admission.NewVersionedAttributes(attrs, gvk, nil)
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	result := v.Validate(t.Context(), gvr, versioned, nil, nil, celconfig.RuntimeCELCostBudget, nil)
	for _, d := range result.Decisions {
		switch {
		case d.Evaluation == validating.EvalError:
			t.Errorf("evaluation error: %s", d.Message)
			denied = append(denied, d.Message)
		case d.Action == validating.ActionDeny:
			denied = append(denied, d.Message)
		}
	}
	return denied
}

func TestNodeRestrictionPolicy(t *testing.T) {
	v := policy(t)
	handlerOf := func(ns, node string) user.Info {
		u := &user.DefaultInfo{Name: "system:serviceaccount:" + ns + ":virt-handler", Groups: []string{"system:serviceaccounts"}}
		if node != "" {
			u.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
		}
		return u
	}
	handler := handlerOf("virt-system", "node-1")
	nodeGVR, nodeGVK := corev1.SchemeGroupVersion.WithResource("nodes"), corev1.SchemeGroupVersion.WithKind("Node")
	leaseGVR, leaseGVK := coordinationv1.SchemeGroupVersion.WithResource("leases"), coordinationv1.SchemeGroupVersion.WithKind("Lease")

	node := func(name string, mutate ...func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{corev1.LabelHostname: name, virtv1.SchedulableNodeLabel: "false"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		for _, m := range mutate {
			m(n)
		}
		return n
	}
	lease := func(name, holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "virt-system", Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	}
	updateNode := func(u user.Info, name string, mutate func(*corev1.Node)) []string {
		return admit(t, v, u, admission.Update, nodeGVR, nodeGVK, "", name, "", node(name, mutate), node(name))
	}
	schedulable := func(n *corev1.Node) { n.Labels[virtv1.SchedulableNodeLabel] = "true" }

	tests := []struct {
		name   string
		denied []string // what is refused
		allow  bool
		want   string // part of the denial
	}{
		{"its Node's schedulable label", updateNode(handler, "node-1", schedulable), true, ""},
		{"a new label under virtualization.kubevirt.io/", updateNode(handler, "node-1", func(n *corev1.Node) { n.Labels["virtualization.kubevirt.io/x"] = "y" }), true, ""},
		{"removing a label under virtualization.kubevirt.io/", updateNode(handler, "node-1", func(n *corev1.Node) { delete(n.Labels, virtv1.SchedulableNodeLabel) }), true, ""},
		{"another Node", updateNode(handler, "node-2", schedulable), false, "may only patch its own Node"},
		{"its Node's status subresource", admit(t, v, handler, admission.Update, nodeGVR, nodeGVK, "", "node-1", "status", node("node-1", schedulable), node("node-1")), false, "own Node"},
		{"a label outside the prefix", updateNode(handler, "node-1", func(n *corev1.Node) { n.Labels["example.org/x"] = "y" }), false, "only change labels under"},
		{"changing kubernetes.io/hostname", updateNode(handler, "node-1", func(n *corev1.Node) { n.Labels[corev1.LabelHostname] = "x" }), false, "only change labels under"},
		{"removing kubernetes.io/hostname", updateNode(handler, "node-1", func(n *corev1.Node) { delete(n.Labels, corev1.LabelHostname) }), false, "only change labels under"},
		{"an annotation", updateNode(handler, "node-1", func(n *corev1.Node) { n.Annotations["virtualization.kubevirt.io/heartbeat"] = "x" }), false, "not its annotations"},
		{"the first annotation", admit(t, v, handler, admission.Update, nodeGVR, nodeGVK, "", "node-1", "",
			node("node-1", func(n *corev1.Node) { n.Annotations = map[string]string{"a": "b"} }),
			node("node-1", func(n *corev1.Node) { n.Annotations = nil })), false, "not its annotations"},
		{"a taint", updateNode(handler, "node-1", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}} }), false, "spec"},
		{"cordoning", updateNode(handler, "node-1", func(n *corev1.Node) { n.Spec.Unschedulable = true }), false, "spec"},
		{"its status", updateNode(handler, "node-1", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }), false, "status"},
		{"a finalizer", updateNode(handler, "node-1", func(n *corev1.Node) { n.Finalizers = []string{"x"} }), false, "finalizers"},
		{"deleting its Node", admit(t, v, handler, admission.Delete, nodeGVR, nodeGVK, "", "node-1", "", nil, node("node-1")), false, "may not delete"},
		{"creating a Node", admit(t, v, handler, admission.Create, nodeGVR, nodeGVK, "", "node-1", "", node("node-1"), nil), false, "may not create"},
		{"a token without a node", updateNode(handlerOf("virt-system", ""), "node-1", schedulable), false, "name no node"},
		{"virt-handler of another namespace", updateNode(handlerOf("elsewhere", "node-1"), "node-2", schedulable), false, "own Node"},
		{"another service account", updateNode(&user.DefaultInfo{Name: "system:serviceaccount:virt-system:virt-controller"}, "node-2", schedulable), true, ""},

		{"creating its Lease", admit(t, v, handler, admission.Create, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-1", "",
			lease("virt-handler-node-1", "node-1"), nil), true, ""},
		{"renewing its Lease", admit(t, v, handler, admission.Update, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-1", "",
			lease("virt-handler-node-1", "node-1"), lease("virt-handler-node-1", "node-1")), true, ""},
		{"renewing another node's Lease", admit(t, v, handler, admission.Update, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-2", "",
			lease("virt-handler-node-2", "node-1"), lease("virt-handler-node-2", "node-2")), false, "may only write the Lease virt-handler-node-1"},
		{"taking another node's Lease as its holder", admit(t, v, handler, admission.Update, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-2", "",
			lease("virt-handler-node-2", "node-2"), lease("virt-handler-node-2", "node-2")), false, "may only write the Lease"},
		{"creating another node's Lease", admit(t, v, handler, admission.Create, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-2", "",
			lease("virt-handler-node-2", "node-2"), nil), false, "may only write the Lease"},
		{"its Lease held by another", admit(t, v, handler, admission.Update, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-1", "",
			lease("virt-handler-node-1", "node-2"), lease("virt-handler-node-1", "node-1")), false, "held by itself"},
		{"virt-controller's Lease", admit(t, v, handler, admission.Update, leaseGVR, leaseGVK, "virt-system", "virt-controller", "",
			lease("virt-controller", "node-1"), lease("virt-controller", "x")), false, "may only write the Lease"},
		{"deleting its Lease", admit(t, v, handler, admission.Delete, leaseGVR, leaseGVK, "virt-system", "virt-handler-node-1", "",
			nil, lease("virt-handler-node-1", "node-1")), false, "may not delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.allow && len(tt.denied) > 0:
				t.Errorf("denied: %q", tt.denied)
			case !tt.allow && len(tt.denied) == 0:
				t.Errorf("allowed")
			case !tt.allow && !strings.Contains(strings.Join(tt.denied, "\n"), tt.want):
				t.Errorf("denied with %q, want a message with %q", tt.denied, tt.want)
			}
		})
	}
}
