package browser

import (
	_ "embed"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

//go:embed harness.js
var harnessJS []byte

// server serves, on 127.0.0.1, cross-origin isolated:
//
//	/harness.js               the page's helper script
//	/d/ID/FILE                a registered onnxruntime-web dist folder
//	/page/ID/BUNDLE           a page that loads /d/ID/BUNDLE and /harness.js
//	/m/ID/NAME                a registered model file
type server struct {
	srv   *http.Server
	base  string          // http://127.0.0.1:PORT
	hosts map[string]bool // the Host headers it answers: 127.0.0.1:PORT, localhost:PORT

	mu     sync.Mutex
	dists  map[string]string // id → dir
	distID map[string]string // dir → id
	models map[string]string // id → file
	modID  map[string]string // file → id
}

var (
	serverMu sync.Mutex
	theSrv   *server
)

func getServer() (*server, error) {
	serverMu.Lock()
	defer serverMu.Unlock()
	if theSrv != nil {
		return theSrv, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("local HTTP server: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := &server{
		base:   "http://" + ln.Addr().String(),
		hosts:  map[string]bool{fmt.Sprintf("127.0.0.1:%d", port): true, fmt.Sprintf("localhost:%d", port): true},
		dists:  map[string]string{},
		distID: map[string]string{},
		models: map[string]string{},
		modID:  map[string]string{},
	}
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
	theSrv = s
	return s, nil
}

func stopServer() {
	serverMu.Lock()
	defer serverMu.Unlock()
	if theSrv != nil {
		_ = theSrv.srv.Close()
		theSrv = nil
	}
}

// dist registers dir and returns its id.
func (s *server) dist(dir string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.distID[dir]; ok {
		return id
	}
	id := fmt.Sprint(len(s.dists))
	s.dists[id], s.distID[dir] = dir, id
	return id
}

// model registers file and returns the URL path it is served at.
func (s *server) model(file string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.modID[file]
	if !ok {
		id = fmt.Sprint(len(s.models))
		s.models[id], s.modID[file] = file, id
	}
	return "/m/" + id + "/" + filepath.Base(file)
}

// pageURL is the page that loads bundle from the dist folder dir.
func (s *server) pageURL(dir, bundle string) string {
	return s.base + "/page/" + s.dist(dir) + "/" + bundle
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A page on any web site can resolve its own host name to 127.0.0.1 (DNS
	// rebinding) and then read this server as same-origin: its requests carry
	// that host name. Only our own names are answered.
	if !s.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "host not allowed: this server answers only to 127.0.0.1 and localhost on its port", http.StatusForbidden)
		return
	}
	h := w.Header()
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	switch {
	case r.URL.Path == "/harness.js":
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		_, _ = w.Write(harnessJS)
	case r.URL.Path == "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
	case len(parts) == 3 && parts[0] == "page":
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		src := "/d/" + parts[1] + "/" + parts[2]
		fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>hwtest</title>\n"+
			"<script src=\"%s\"></script>\n<script src=\"/harness.js\"></script>\n", html.EscapeString(src))
	case len(parts) == 3 && parts[0] == "d":
		s.mu.Lock()
		dir, ok := s.dists[parts[1]]
		s.mu.Unlock()
		if !ok || strings.Contains(parts[2], "..") {
			notFound(w, r)
			return
		}
		serveFile(w, r, filepath.Join(dir, filepath.FromSlash(parts[2])))
	case len(parts) == 3 && parts[0] == "m":
		s.mu.Lock()
		file, ok := s.models[parts[1]]
		s.mu.Unlock()
		if !ok {
			notFound(w, r)
			return
		}
		h.Set("Cache-Control", "no-store")
		serveFile(w, r, file)
	default:
		notFound(w, r)
	}
}

// serveFile serves a regular file; anything else (missing, a folder) is not
// found. http.ServeFile is not used: it lists folders and redirects.
func serveFile(w http.ResponseWriter, r *http.Request, file string) {
	f, err := os.Open(file)
	if err != nil {
		notFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		notFound(w, r)
		return
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// notFound names the request path only: where the files live on this machine
// is none of the page's business.
func notFound(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "404 not found: "+r.URL.Path, http.StatusNotFound)
}
