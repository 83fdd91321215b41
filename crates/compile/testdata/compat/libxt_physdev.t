:FORWARD
-m physdev ! --physdev-in eth+ ! --physdev-is-bridged;=;OK
-m physdev --physdev-in abcdefghijklmn+ --physdev-out abcdefghijklmno ! --physdev-is-out;-m physdev --physdev-in abcdefghijklmn+ ! --physdev-is-out --physdev-out abcdefghijklmno;OK
-m physdev ! --physdev-is-in;=;OK
