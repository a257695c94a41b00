package coord

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v2"
)

// inCluster is where a pod finds its service account.
const inCluster = "/var/run/secrets/kubernetes.io/serviceaccount/"

// kubeconfig is the part of a kubeconfig file the backend uses: the
// current context's cluster (server, CA) and user (token or client cert).
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Contexts       []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster   string `yaml:"cluster"`
			User      string `yaml:"user"`
			Namespace string `yaml:"namespace"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server   string `yaml:"server"`
			CA       string `yaml:"certificate-authority"`
			CAData   string `yaml:"certificate-authority-data"`
			Insecure bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token      string `yaml:"token"`
			TokenFile  string `yaml:"tokenFile"`
			Cert       string `yaml:"client-certificate"`
			CertData   string `yaml:"client-certificate-data"`
			Key        string `yaml:"client-key"`
			KeyData    string `yaml:"client-key-data"`
			Exec       any    `yaml:"exec"`
			AuthPlugin any    `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// dialKube makes the client for the API server named by the kubeconfig
// file at path, or, with path "", the pod's in-cluster service account.
// namespace "" means the kubeconfig context's, else the pod's.
func dialKube(path, namespace string, ttl time.Duration) (*kubeAPI, error) {
	var k *kubeAPI
	var tlsc *tls.Config
	var err error
	if path == "" {
		k, tlsc, err = inClusterAccess()
	} else {
		k, tlsc, err = kubeconfigAccess(path)
	}
	if err != nil {
		return nil, err
	}
	if namespace != "" {
		k.namespace = namespace
	}
	if k.namespace == "" {
		k.namespace = "default"
	}
	// A hung request must not outlast the validity it serves; each has
	// its own deadline too (the callers' contexts).
	tr := &http.Transport{TLSClientConfig: tlsc, DialContext: (&net.Dialer{Timeout: max(ttl/4, 250*time.Millisecond)}).DialContext,
		ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	k.hc = &http.Client{Transport: tr}
	return k, nil
}

func inClusterAccess() (*kubeAPI, *tls.Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, nil, errors.New("kubernetes: not in a pod (KUBERNETES_SERVICE_HOST unset) and no coord.kubeconfig given")
	}
	ca, err := os.ReadFile(inCluster + "ca.crt")
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes in-cluster: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, nil, fmt.Errorf("kubernetes in-cluster: no certificate in %sca.crt", inCluster)
	}
	ns, _ := os.ReadFile(inCluster + "namespace")
	k := &kubeAPI{base: "https://" + net.JoinHostPort(host, port), namespace: strings.TrimSpace(string(ns)),
		token: tokenFile(inCluster + "token")}
	return k, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// tokenFile reads the token at every request: the kubelet rotates
// projected service account tokens in place.
func tokenFile(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("kubernetes token: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
}

func kubeconfigAccess(path string) (*kubeAPI, *tls.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("coord.kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return nil, nil, fmt.Errorf("coord.kubeconfig %s: %w", path, err)
	}
	kc.resolve(filepath.Dir(path))
	k, tlsc, err := kc.access()
	if err != nil {
		return nil, nil, fmt.Errorf("coord.kubeconfig %s: %w", path, err)
	}
	return k, tlsc, nil
}

// resolve makes the file paths in kc relative to dir absolute, as
// kubectl reads them: relative to the kubeconfig file.
func (kc *kubeconfig) resolve(dir string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for i := range kc.Clusters {
		abs(&kc.Clusters[i].Cluster.CA)
	}
	for i := range kc.Users {
		u := &kc.Users[i].User
		abs(&u.TokenFile)
		abs(&u.Cert)
		abs(&u.Key)
	}
}

func (kc *kubeconfig) access() (*kubeAPI, *tls.Config, error) {
	var cluster, user, ns string
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			cluster, user, ns = c.Context.Cluster, c.Context.User, c.Context.Namespace
		}
	}
	if cluster == "" {
		return nil, nil, fmt.Errorf("current-context %q names no context with a cluster", kc.CurrentContext)
	}
	k := &kubeAPI{namespace: ns, token: func() (string, error) { return "", nil }}
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, c := range kc.Clusters {
		if c.Name != cluster {
			continue
		}
		k.base = strings.TrimSuffix(c.Cluster.Server, "/")
		tlsc.InsecureSkipVerify = c.Cluster.Insecure
		pool, err := pemPool(c.Cluster.CA, c.Cluster.CAData)
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %s: %w", cluster, err)
		}
		tlsc.RootCAs = pool
	}
	if !strings.HasPrefix(k.base, "https://") && !strings.HasPrefix(k.base, "http://") {
		return nil, nil, fmt.Errorf("cluster %q: server %q is not an http(s) URL", cluster, k.base)
	}
	for _, u := range kc.Users {
		if u.Name == user {
			if err := userAccess(k, tlsc, u.User.Token, u.User.TokenFile, u.User.Cert, u.User.CertData, u.User.Key, u.User.KeyData); err != nil {
				return nil, nil, fmt.Errorf("user %s: %w", user, err)
			}
			if u.User.Exec != nil || u.User.AuthPlugin != nil {
				return nil, nil, fmt.Errorf("user %s: exec and auth-provider credentials are not supported: use a token or a client certificate", user)
			}
		}
	}
	return k, tlsc, nil
}

func userAccess(k *kubeAPI, tlsc *tls.Config, token, tokenPath, cert, certData, key, keyData string) error {
	switch {
	case token != "":
		k.token = func() (string, error) { return token, nil }
	case tokenPath != "":
		k.token = tokenFile(tokenPath)
	}
	certPEM, err := fileOrData(cert, certData)
	if err != nil || certPEM == nil {
		return err
	}
	keyPEM, err := fileOrData(key, keyData)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	tlsc.Certificates = []tls.Certificate{pair}
	return nil
}

// pemPool is the CA pool from a file or inline base64 data; nil (the
// system's) when neither is given.
func pemPool(path, data string) (*x509.CertPool, error) {
	b, err := fileOrData(path, data)
	if err != nil || b == nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in certificate-authority")
	}
	return pool, nil
}

func fileOrData(path, data string) ([]byte, error) {
	switch {
	case data != "":
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("inline data is not base64: %w", err)
		}
		return b, nil
	case path != "":
		return os.ReadFile(path)
	}
	return nil, nil
}
