package nodefence

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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
	"sigs.k8s.io/yaml"
)

// policy compiles the node restriction the kube-apiserver enforces on
// virt-controller (artifacts/virt-controller/node-restriction.yaml) the
// way its ValidatingAdmissionPolicy plugin does, so that its expressions
// and this package's write are checked together without a cluster (as
// node/heartbeat does for virt-handler's).
func policy(t *testing.T) validating.Validator {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "artifacts", "virt-controller", "node-restriction.yaml"))
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

// admit runs v on a request about a Node and returns the denials' messages.
func admit(t *testing.T, v validating.Validator, u user.Info, op admission.Operation, name, sub string, obj, old kruntime.Object) []string {
	t.Helper()
	gvr, gvk := corev1.SchemeGroupVersion.WithResource("nodes"), corev1.SchemeGroupVersion.WithKind("Node")
	for _, o := range []kruntime.Object{obj, old} {
		if o != nil {
			o.GetObjectKind().SetGroupVersionKind(gvk)
		}
	}
	attrs := admission.NewAttributesRecord(obj, old, gvk, "", name, gvr, sub, op, nil, false, u)
	versioned, err := admission.NewVersionedAttributes(attrs, gvk, nil)
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	result := v.Validate(t.Context(), schema.GroupVersionResource(gvr), versioned, nil, nil, celconfig.RuntimeCELCostBudget, nil)
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

// TestNodeRestrictionPolicy: virt-controller may add the out-of-service
// taint to a NotReady Node, which is what fence writes, and nothing else.
func TestNodeRestrictionPolicy(t *testing.T) {
	v := policy(t)
	controllerOf := func(ns string) user.Info {
		return &user.DefaultInfo{Name: "system:serviceaccount:" + ns + ":virt-controller", Groups: []string{"system:serviceaccounts"}}
	}
	controller := controllerOf("virt-system")
	node := func(ready corev1.ConditionStatus, mutate ...func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2",
			Labels:      map[string]string{corev1.LabelHostname: "node-2"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
			Spec: corev1.NodeSpec{PodCIDR: "198.18.2.0/24", Taints: []corev1.Taint{
				{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
				{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now}},
			}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
		for _, m := range mutate {
			m(n)
		}
		return n
	}
	// fenced is the Node as fence writes it.
	fenced := func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, OutOfServiceTaint(now.Add(time.Minute))) }
	update := func(u user.Info, ready corev1.ConditionStatus, mutate ...func(*corev1.Node)) []string {
		return admit(t, v, u, admission.Update, "node-2", "", node(ready, mutate...), node(ready))
	}
	tests := []struct {
		name   string
		denied []string
		allow  bool
		want   string
	}{
		{"fencing a NotReady (Unknown) Node", update(controller, corev1.ConditionUnknown, fenced), true, ""},
		{"fencing a NotReady (False) Node", update(controller, corev1.ConditionFalse, fenced), true, ""},
		{"fencing a Node without taints", admit(t, v, controller, admission.Update, "node-2", "",
			node(corev1.ConditionUnknown, func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{OutOfServiceTaint(now)} }),
			node(corev1.ConditionUnknown, func(n *corev1.Node) { n.Spec.Taints = nil })), true, ""},
		{"virt-controller of another namespace, fencing", update(controllerOf("elsewhere"), corev1.ConditionUnknown, fenced), true, ""},
		{"fencing a Ready Node", update(controller, corev1.ConditionTrue, fenced), false, "only fence a NotReady Node"},
		{"fencing a Node without a Ready condition", admit(t, v, controller, admission.Update, "node-2", "",
			node(corev1.ConditionTrue, fenced, func(n *corev1.Node) { n.Status.Conditions = nil }),
			node(corev1.ConditionTrue, func(n *corev1.Node) { n.Status.Conditions = nil })), false, "only fence a NotReady Node"},
		{"the taint with another value", update(controller, corev1.ConditionUnknown, func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "x", Effect: corev1.TaintEffectNoExecute})
		}), false, "only add the taint"},
		{"another taint", update(controller, corev1.ConditionUnknown, func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.org/x", Effect: corev1.TaintEffectNoSchedule})
		}), false, "only add the taint"},
		{"removing a taint", update(controller, corev1.ConditionUnknown, fenced, func(n *corev1.Node) { n.Spec.Taints = n.Spec.Taints[1:] }),
			false, "remove or change no other taint"},
		{"cordoning", update(controller, corev1.ConditionUnknown, fenced, func(n *corev1.Node) { n.Spec.Unschedulable = true }), false, "other spec fields"},
		{"a label", update(controller, corev1.ConditionUnknown, fenced, func(n *corev1.Node) { n.Labels["x"] = "y" }), false, "labels"},
		{"an annotation", update(controller, corev1.ConditionUnknown, fenced, func(n *corev1.Node) { n.Annotations["x"] = "y" }), false, "annotations"},
		{"its pod CIDR", update(controller, corev1.ConditionUnknown, func(n *corev1.Node) { n.Spec.PodCIDR = "198.18.3.0/24" }), false, "other spec fields"},
		{"its status", admit(t, v, controller, admission.Update, "node-2", "status",
			node(corev1.ConditionTrue), node(corev1.ConditionUnknown)), false, "not update nodes/status"},
		{"deleting a Node", admit(t, v, controller, admission.Delete, "node-2", "", nil, node(corev1.ConditionUnknown)), false, "not delete nodes"},
		{"creating a Node", admit(t, v, controller, admission.Create, "node-2", "", node(corev1.ConditionUnknown), nil), false, "not create nodes"},
		{"another service account is not this policy's", update(&user.DefaultInfo{Name: "system:serviceaccount:virt-system:virt-handler"},
			corev1.ConditionTrue, func(n *corev1.Node) { n.Spec.Unschedulable = true }), true, ""},
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
