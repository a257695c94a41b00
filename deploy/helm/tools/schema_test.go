package tools

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// types is every kind the chart may render, as its Go API type.
var types = map[string]func() any{
	"apps/v1/Deployment":                       func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                      func() any { return &appsv1.StatefulSet{} },
	"v1/ConfigMap":                             func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                                func() any { return &corev1.Secret{} },
	"v1/Service":                               func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                        func() any { return &corev1.ServiceAccount{} },
	"networking.k8s.io/v1/NetworkPolicy":       func() any { return &networkingv1.NetworkPolicy{} },
	"rbac.authorization.k8s.io/v1/Role":        func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding": func() any { return &rbacv1.RoleBinding{} },
	"monitoring.coreos.com/v1/ServiceMonitor":  func() any { return &monitoringv1.ServiceMonitor{} },
}

// object is one rendered manifest decoded strictly into its API type.
type object struct {
	kind string
	obj  any
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// decode splits helm template's output and decodes every document
// strictly: an unknown field, a wrong type or an unknown kind is an error.
func decode(rendered string) ([]object, error) {
	var objs []object
	for _, doc := range docSep.Split(rendered, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("%v in\n%s", err, doc)
		}
		key := head.APIVersion + "/" + head.Kind
		mk, ok := types[key]
		if !ok {
			return nil, fmt.Errorf("rendered %s, which the check has no type for", key)
		}
		obj := mk()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
		objs = append(objs, object{kind: head.Kind, obj: obj})
	}
	return objs, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func kinds(objs []object) map[string]int {
	n := map[string]int{}
	for _, o := range objs {
		n[o.kind]++
	}
	return n
}

func TestRenderedObjectsValidate(t *testing.T) {
	want := map[string][]string{
		"one":  {"Deployment", "ConfigMap", "Secret", "Service", "ServiceMonitor", "NetworkPolicy"},
		"kube": {"StatefulSet", "ServiceAccount", "Role", "RoleBinding", "ServiceMonitor", "NetworkPolicy"},
		"etcd": {"StatefulSet", "ConfigMap", "Secret"},
	}
	for name, set := range valueSets {
		objs, err := decode(render(t, set))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := kinds(objs)
		for _, k := range want[name] {
			if got[k] != 1 {
				t.Errorf("%s: rendered %d %s, want 1 (all: %v)", name, got[k], k, got)
			}
		}
		for _, o := range objs {
			checkPod(t, name, o)
		}
	}
}

// checkPod holds the chart to its security context: non-root, a
// read-only root filesystem, no privilege escalation.
func checkPod(t *testing.T, name string, o object) {
	var spec *corev1.PodSpec
	switch v := o.obj.(type) {
	case *appsv1.Deployment:
		spec = &v.Spec.Template.Spec
	case *appsv1.StatefulSet:
		spec = &v.Spec.Template.Spec
	default:
		return
	}
	sc := spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("%s: %s pod is not non-root: %+v", name, o.kind, sc)
	}
	for _, c := range spec.Containers {
		cs := c.SecurityContext
		if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
			cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
			t.Errorf("%s: container %s: root filesystem writable or escalation allowed: %+v", name, c.Name, cs)
		}
	}
}

// The check itself: an unknown field, a misspelt one and an unknown kind
// are each refused.
func TestDecodeRefuses(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nbogus: 1\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 1}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
	} {
		if _, err := decode(doc); err == nil {
			t.Errorf("decoded without error:\n%s", doc)
		}
	}
}
