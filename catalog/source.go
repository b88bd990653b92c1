package catalog

import (
	"fmt"
	"regexp"
	"strings"
)

// Schemes a model source can use.
var Schemes = []string{"file", "zoo", "npm", "hf"}

// Source is a model source split into its parts; which parts are set depends on
// the scheme.
type Source struct {
	Scheme   string // file, zoo, npm or hf
	Path     string // file: the path, relative to models.yaml's directory; npm:, hf: the file inside the package or repository
	Name     string // zoo: the model the project builds itself
	Package  string // npm: the package, scope included ("@ricky0123/vad-web")
	Version  string // npm: the exact version
	Repo     string // hf: "org/name"
	Revision string // hf: the commit or ref
}

var (
	npmPackage  = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	npmVersion  = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	hfName      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	hfRevision  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	sha256Hex   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	sourceForms = map[string]string{
		"file": "file:PATH (relative to models.yaml's directory)",
		"zoo":  "zoo:NAME",
		"npm":  "npm:PACKAGE@VERSION/PATH",
		"hf":   "hf:ORG/REPO/PATH@REVISION",
	}
)

// ParseSource splits a source such as "npm:@ricky0123/vad-web@0.0.31/dist/x.onnx" or
// "hf:org/repo/onnx/model.onnx@<commit>" into its parts, checking its syntax.
func ParseSource(s string) (Source, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Source{}, fmt.Errorf("no scheme: want %s, e.g. \"file:%s\"", schemeList(), s)
	}
	form, known := sourceForms[scheme]
	if !known {
		return Source{}, fmt.Errorf("unknown scheme %q: want %s%s", scheme+":", schemeList(), didYouMean(scheme+":", schemePrefixes()))
	}
	src, problem := Source{Scheme: scheme}, ""
	switch scheme {
	case "file":
		src.Path, problem = rest, relativePathProblem(rest)
	case "zoo":
		src.Name = rest
		problem = idProblem("the zoo name", rest)
	case "npm":
		src, problem = parseNPM(rest)
	case "hf":
		src, problem = parseHF(rest)
	}
	if problem != "" {
		return Source{}, fmt.Errorf("%s; want %s", problem, form)
	}
	return src, nil
}

func parseNPM(rest string) (Source, string) {
	src := Source{Scheme: "npm"}
	// A scoped package starts with '@', so the version's '@' is the next one.
	at := strings.Index(rest[min(1, len(rest)):], "@")
	if at < 0 {
		return src, "no @VERSION"
	}
	at += min(1, len(rest))
	src.Package = rest[:at]
	version, path, ok := strings.Cut(rest[at+1:], "/")
	if !ok {
		return src, "no /PATH after the version"
	}
	src.Version, src.Path = version, path
	switch {
	case !npmPackage.MatchString(src.Package):
		return src, fmt.Sprintf("%q is not an npm package name", src.Package)
	case !npmVersion.MatchString(src.Version):
		return src, fmt.Sprintf("%q is not an exact version (MAJOR.MINOR.PATCH)", src.Version)
	}
	return src, innerPathProblem(src.Path)
}

func parseHF(rest string) (Source, string) {
	src := Source{Scheme: "hf"}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return src, "no @REVISION"
	}
	src.Revision = rest[at+1:]
	parts := strings.SplitN(rest[:at], "/", 3)
	if len(parts) < 3 {
		return src, "no ORG/REPO/PATH before the revision"
	}
	src.Repo, src.Path = parts[0]+"/"+parts[1], parts[2]
	switch {
	case !hfName.MatchString(parts[0]):
		return src, fmt.Sprintf("%q is not a Hugging Face organisation", parts[0])
	case !hfName.MatchString(parts[1]):
		return src, fmt.Sprintf("%q is not a Hugging Face repository", parts[1])
	case !hfRevision.MatchString(src.Revision):
		return src, fmt.Sprintf("%q is not a revision", src.Revision)
	}
	return src, innerPathProblem(src.Path)
}

// relativePathProblem checks a file: path; it may leave the catalog's directory.
func relativePathProblem(p string) string {
	switch {
	case p == "":
		return "no path"
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("path %q is absolute", p)
	case hasControl(p):
		return fmt.Sprintf("path %q holds control characters", p)
	}
	return ""
}

// innerPathProblem checks a path inside a package or repository.
func innerPathProblem(p string) string {
	if p2 := relativePathProblem(p); p2 != "" {
		return p2
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Sprintf("path %q has an empty, \".\" or \"..\" part", p)
		}
	}
	return ""
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

func schemePrefixes() []string {
	parts := make([]string, len(Schemes))
	for i, s := range Schemes {
		parts[i] = s + ":"
	}
	return parts
}

func schemeList() string {
	parts := schemePrefixes()
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// String writes the source back in catalog syntax.
func (s Source) String() string {
	switch s.Scheme {
	case "file":
		return "file:" + s.Path
	case "zoo":
		return "zoo:" + s.Name
	case "npm":
		return "npm:" + s.Package + "@" + s.Version + "/" + s.Path
	case "hf":
		return "hf:" + s.Repo + "/" + s.Path + "@" + s.Revision
	}
	return s.Scheme + ":"
}
