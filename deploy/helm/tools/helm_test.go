package tools

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
)

// chartDir is deploy/helm/rpengine.
func chartDir(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "rpengine")
}

// helm runs the helm CLI in process with args and returns its output.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, v))
	}
	var out bytes.Buffer
	cmd, err := helmcmd.NewRootCmd(&out, args, func(bool) {})
	if err != nil {
		return "", err
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err = cmd.Execute()
	return out.String(), err
}

// The value sets the chart is checked with: one engine (a Deployment),
// three with Kubernetes coordination (a StatefulSet, RBAC), and three over
// etcd with client certificates; every optional manifest on.
var valueSets = map[string][]string{
	"one": {"--set", "manifests.service_monitor=true,manifests.network_policy=true"},
	"kube": {"--set", "pod.replicas.engine=3,conf.coord.backend=kubernetes,conf.coord.partitions=64," +
		"manifests.rbac=true,manifests.service_monitor=true,manifests.network_policy=true"},
	"etcd": {"--set", "pod.replicas.engine=3,conf.coord.etcd[0]=https://etcd:2379,conf.coord.shards[0]=a," +
		"conf.coord.shards[1]=b,secrets.etcd=rpengine-etcd,conf.coord.ca_file=/etc/rpengine/etcd/ca.crt," +
		"conf.coord.cert_file=/etc/rpengine/etcd/tls.crt,conf.coord.key_file=/etc/rpengine/etcd/tls.key"},
}

func render(t *testing.T, set []string) string {
	t.Helper()
	args := append([]string{"template", "rpengine", chartDir(t), "--namespace", "openstack"}, set...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", set, err, out)
	}
	return out
}

func TestHelmLint(t *testing.T) {
	for name, set := range valueSets {
		out, err := helm(t, append([]string{"lint", "--strict", chartDir(t)}, set...)...)
		if err != nil || !strings.Contains(out, "0 chart(s) failed") {
			t.Errorf("helm lint --strict (%s): %v\n%s", name, err, out)
		}
	}
}

// Several engines without [coord] would fight over one fleet: refused.
func TestHelmRefusesReplicasWithoutCoord(t *testing.T) {
	out, err := helm(t, "template", "rpengine", chartDir(t), "--set", "pod.replicas.engine=2")
	if err == nil || !strings.Contains(out+err.Error(), "needs conf.coord") {
		t.Fatalf("replicas 2 without conf.coord rendered: %v\n%s", err, out)
	}
}
