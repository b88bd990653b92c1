package browser

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// get asks the local server for path with the Host header host ("" = the
// server's own address).
func get(t *testing.T, s *server, host, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A DNS-rebinding page reaches the server under its own host name: only
// 127.0.0.1:PORT and localhost:PORT are answered.
func TestServerChecksHost(t *testing.T) {
	s, err := getServer()
	if err != nil {
		t.Fatal(err)
	}
	port := s.base[strings.LastIndexByte(s.base, ':'):]
	for host, want := range map[string]int{
		"":                             http.StatusOK,
		"127.0.0.1" + port:             http.StatusOK,
		"localhost" + port:             http.StatusOK,
		"LOCALHOST" + port:             http.StatusOK,
		"attacker.example" + port:      http.StatusForbidden,
		"attacker.example":             http.StatusForbidden,
		"127.0.0.1":                    http.StatusForbidden,
		"127.0.0.1:1" + port[1:] + "0": http.StatusForbidden,
		"localhost.attacker.example":   http.StatusForbidden,
	} {
		code, body := get(t, s, host, "/harness.js")
		if code != want {
			t.Errorf("Host %q: HTTP %d, want %d (%.80q)", host, code, want, body)
		}
		if code == http.StatusForbidden && !strings.Contains(body, "host not allowed") {
			t.Errorf("Host %q: the 403 does not say why: %q", host, body)
		}
	}
}

// A 404 names the request path, never where the files are on this machine,
// and a folder is not listed.
func TestServerNotFoundHidesPaths(t *testing.T) {
	s, err := getServer()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "x.js"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "gone.onnx")
	if err := os.WriteFile(model, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	modelPath := s.model(model)
	if err := os.Remove(model); err != nil {
		t.Fatal(err)
	}
	distPath := "/d/" + s.dist(dir) + "/"
	for _, path := range []string{modelPath, distPath + "missing.js", distPath + "sub", distPath + "sub/", "/m/999/x.onnx", "/nothing"} {
		code, body := get(t, s, "", path)
		if code != http.StatusNotFound || strings.Contains(body, dir) || strings.Contains(body, "x.js") || !strings.Contains(body, path) {
			t.Errorf("%s: HTTP %d %q: want 404 naming the request path only", path, code, body)
		}
	}
	if code, body := get(t, s, "", distPath+"sub/x.js"); code != http.StatusOK || body != "1" {
		t.Errorf("a file of the dist folder: HTTP %d %q", code, body)
	}
}
