package leveeconfig

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// isProperties reports whether a file is read as a Java .properties file: by its extension.
func isProperties(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".properties") }

// decodeProperties reads a .properties file as Spring Boot's OriginTrackedPropertiesLoader
// does, into one mapping of dotted keys per document: "key=value", "key: value" or "key
// value"; lines starting with # or ! are comments; a line ending with an odd number of
// backslashes continues on the next (its leading spaces dropped); the escapes \t, \n, \r,
// \f, \uXXXX and a backslash before any other character (\=, \:, \ , \\) as Java's
// Properties; and a line "#---" or "!---" starts a new document, as Spring's multi-document
// .properties files. A key given twice in a document keeps its last value, as in Java and
// Spring, with a Warning naming both lines. Every value is a string: a list is
// comma-separated or written by index (retryExceptions[0]=...).
func (ps *parser) decodeProperties(data []byte) []*yaml.Node {
	var docs []*yaml.Node
	cur := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}
	index := map[string]int{} // key -> position of its value in cur.Content
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "#---" || line == "!---" {
			docs = append(docs, cur)
			cur = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: lineNo + 1}
			index = map[string]int{}
			continue
		}
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for oddBackslashes(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		key, val := splitProperty(line)
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: unescapeProperty(key), Line: lineNo, Column: 1}
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: unescapeProperty(val), Line: lineNo}
		if at, dup := index[k.Value]; dup {
			ps.warn(Source{File: ps.file, Line: lineNo}, k.Value, "set again (first on line %d): the last value wins, as in a .properties file",
				cur.Content[at-1].Line)
			cur.Content[at-1], cur.Content[at] = k, v
			continue
		}
		cur.Content = append(cur.Content, k, v)
		index[k.Value] = len(cur.Content) - 1
	}
	return append(docs, cur)
}

// oddBackslashes reports whether a line ends with an odd number of backslashes: a
// continuation.
func oddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line into its key and value: the key ends at the first
// unescaped '=', ':' or white space; then white space, one '=' or ':', and white space
// again separate it from the value.
func splitProperty(line string) (key, val string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if line[i] == '=' || line[i] == ':' || line[i] == ' ' || line[i] == '\t' || line[i] == '\f' {
			end = i
			break
		}
	}
	key, rest := line[:end], line[end:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescapeProperty reads the escapes of Java's Properties.
func unescapeProperty(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size - 1
		}
	}
	return b.String()
}
