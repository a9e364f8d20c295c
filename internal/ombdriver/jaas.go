package ombdriver

import (
	"errors"
	"fmt"
	"strings"
)

// jaas is one login module of a sasl.jaas.config:
// `<module class> <flag> key=value ...;`.
type jaas struct {
	module  string
	flag    string
	options map[string]string
}

// parseJAAS reads a sasl.jaas.config as Kafka's JaasConfig does: exactly
// one login module, a control flag, options as key=value with the value a
// word or a double-quoted string (backslash escapes), ended by ';'.
// Errors never quote the text: it holds a password.
func parseJAAS(s string) (jaas, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return jaas{}, err
	}
	const shape = "want one login module: <LoginModule class> required key=\"value\" ...;"
	if len(toks) < 3 || toks[0].kind != word || toks[1].kind != word {
		return jaas{}, errors.New(shape)
	}
	j := jaas{module: toks[0].text, flag: toks[1].text, options: map[string]string{}}
	switch j.flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return jaas{}, fmt.Errorf("the login module %s has no control flag (required); %s", j.module, shape)
	}
	i := 2
	for i < len(toks) && toks[i].kind != semicolon {
		if i+2 >= len(toks) || toks[i].kind != word || toks[i+1].kind != equals || (toks[i+2].kind != word && toks[i+2].kind != quoted) {
			return jaas{}, fmt.Errorf("option %d of %s is not key=value; %s", (i-2)/3+1, j.module, shape)
		}
		if _, dup := j.options[toks[i].text]; dup {
			return jaas{}, fmt.Errorf("option %s of %s is given twice", toks[i].text, j.module)
		}
		j.options[toks[i].text] = toks[i+2].text
		i += 3
	}
	if i >= len(toks) {
		return jaas{}, fmt.Errorf("the login module %s does not end with ';'", j.module)
	}
	if i+1 < len(toks) {
		return jaas{}, errors.New("holds more than one login module; Kafka's clients take exactly one")
	}
	return j, nil
}

type tokenKind int

const (
	word tokenKind = iota
	quoted
	equals
	semicolon
)

type token struct {
	kind tokenKind
	text string
}

func jaasTokens(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, errors.New("a /* comment is not closed")
			}
			i += end + 4
		case c == '=':
			toks = append(toks, token{equals, "="})
			i++
		case c == ';':
			toks = append(toks, token{semicolon, ";"})
			i++
		case c == '"':
			var b strings.Builder
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("a quoted value is not closed (a missing \")")
			}
			i++
			toks = append(toks, token{quoted, b.String()})
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r\f=;\"", rune(s[j])) {
				j++
			}
			toks = append(toks, token{word, s[i:j]})
			i = j
		}
	}
	return toks, nil
}
