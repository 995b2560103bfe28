package bodyscan

import "testing"

func TestReadableCharset(t *testing.T) {
	for label, want := range map[string]bool{
		"utf-8": true, "UTF8": true, "us-ascii": true, "iso-8859-1": true, "windows-1251": true, "koi8-r": true,
		"shift_jis": true, "euc-kr": true, "gb18030": true, "big5": true, "utf-16": true, "utf-16be": true,
		"ibm037": false, "cp037": false, "utf-7": false, "utf-32": false, "iso-2022-jp": false, "iso-2022-kr": false,
		"x-frob": false, "": false,
	} {
		t.Run(label, func(t *testing.T) {
			if got := readableCharset(label); got != want {
				t.Errorf("readableCharset(%q) = %v, want %v", label, got, want)
			}
		})
	}
}
