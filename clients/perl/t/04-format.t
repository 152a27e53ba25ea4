# The JSON and text lines of a message. The JSON cases are the Go
# listener's (zmqpub/json_test.go): both listeners print the same bytes for
# the same message.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use JSON::PP ();
use Test::More;
use ZRedis::ExpiryListener::Format qw(to_json_line to_text_line is_utf8_bytes);

sub msg {
    my ($db, $type, $key, @parts) = @_;
    return { db => $db, type => $type, key => $key, parts => \@parts };
}

my @json_cases = (
    [ 'string', msg(0, 'string', 'k', 'hello'), '{"db":0,"type":"string","key":"k","value":"hello"}' ],
    [ 'empty string and key', msg(15, 'string', '', ''), '{"db":15,"type":"string","key":"","value":""}' ],
    [ 'escapes', msg(0, 'string', "a\"b\\c", "\n\r\t\b\f\x00\x1f\x7f</>&"),
        '{"db":0,"type":"string","key":"a\"b\\\\c","value":"\n\r\t\b\f\u0000\u001f\u007f</>&"}' ],
    [ 'UTF-8 written as is', msg(0, 'string', "cl\xc3\xa9", "na\xc3\xafve \xe2\x98\x83 \xf0\x9f\x98\x80 \xe2\x80\xa8\xe2\x80\xa9"),
        qq({"db":0,"type":"string","key":"cl\xc3\xa9","value":"na\xc3\xafve \xe2\x98\x83 \xf0\x9f\x98\x80 \xe2\x80\xa8\xe2\x80\xa9"}) ],
    [ 'binary key and value as base64', msg(0, 'string', "\x00k\xff", "\xff\x00\x01"),
        '{"db":0,"type":"string","key":{"base64":"AGv/"},"value":{"base64":"/wAB"}}' ],
    [ 'truncated UTF-8 sequence is binary', msg(0, 'string', 'k', "\xe2\x98"),
        '{"db":0,"type":"string","key":"k","value":{"base64":"4pg="}}' ],
    [ 'surrogate is binary', msg(0, 'string', 'k', "\xed\xa0\x80"),
        '{"db":0,"type":"string","key":"k","value":{"base64":"7aCA"}}' ],
    [ 'noncharacter is text', msg(0, 'string', 'k', "\xef\xbf\xbe"),
        qq({"db":0,"type":"string","key":"k","value":"\xef\xbf\xbe"}) ],
    [ 'hash as an object in message order', msg(3, 'hash', 'h', 'z', '1', 'a', '', 'm', 'x'),
        '{"db":3,"type":"hash","key":"h","value":{"z":"1","a":"","m":"x"}}' ],
    [ 'hash with a binary value', msg(0, 'hash', 'h', 'f', "\xff"),
        '{"db":0,"type":"hash","key":"h","value":{"f":{"base64":"/w=="}}}' ],
    [ 'hash with a binary field name', msg(0, 'hash', 'h', 'f', 'v', "\xff", 'w'),
        '{"db":0,"type":"hash","key":"h","value":{"f":"v","base64:/w==":"w"}}' ],
    [ 'empty hash', msg(0, 'hash', 'h'), '{"db":0,"type":"hash","key":"h","value":{}}' ],
    [ 'hash-fields as a hash\'s object', msg(0, 'hash-fields', 'mail:42', 'rcpt:2', 'deferred'),
        '{"db":0,"type":"hash-fields","key":"mail:42","value":{"rcpt:2":"deferred"}}' ],
    [ 'hash-fields with binary field and value, an empty value', msg(5, 'hash-fields', 'h', "\xff", "\x00\xfe", 'note', ''),
        '{"db":5,"type":"hash-fields","key":"h","value":{"base64:/w==":{"base64":"AP4="},"note":""}}' ],
    [ 'list', msg(0, 'list', 'l', 'a', 'a', "\x80"),
        '{"db":0,"type":"list","key":"l","value":["a","a",{"base64":"gA=="}]}' ],
    [ 'set', msg(0, 'set', 's', 'm1', 'm2'), '{"db":0,"type":"set","key":"s","value":["m1","m2"]}' ],
    [ 'empty set', msg(0, 'set', 's'), '{"db":0,"type":"set","key":"s","value":[]}' ],
    [ 'zset scores', msg(0, 'zset', 'z', 'a', '-inf', 'b', '-1.5', 'c', '0', 'd', '1e+300', 'e', '0.10000000000000001', 'f', 'inf'),
        '{"db":0,"type":"zset","key":"z","value":[["a","-inf"],["b",-1.5],["c",0],["d",1e+300],["e",0.10000000000000001],["f","inf"]]}' ],
    [ 'zset scores outside JSON number syntax',
        msg(0, 'zset', 'z', 'a', '+1', 'b', '.5', 'c', 'nan', 'd', '1e999', 'e', '1.', 'f', 'abc', 'g', '0x1p4', 'h', '1e-999', 'i', "\xff"),
        '{"db":0,"type":"zset","key":"z","value":[["a","+1"],["b",".5"],["c","nan"],["d","1e999"],["e","1."],["f","abc"],["g","0x1p4"],["h",1e-999],["i",{"base64":"/w=="}]]}' ],
    [ 'stream as XRANGE replies, fields in entry order',
        msg(4, 'stream', 'events', [ '1700000000000-0', [ 'z', '1', 'a', '' ] ], [ '1700000000000-2', [ 'f', 'x', 'f', "\xff" ] ]),
        '{"db":4,"type":"stream","key":"events","value":[["1700000000000-0",["z","1","a",""]],["1700000000000-2",["f","x","f",{"base64":"/w=="}]]]}' ],
    [ 'empty stream', msg(0, 'stream', 's'), '{"db":0,"type":"stream","key":"s","value":[]}' ],
    [ 'stream entry without fields', msg(0, 'stream', 's', [ '1-1', [] ]), '{"db":0,"type":"stream","key":"s","value":[["1-1",[]]]}' ],
    [ 'message id after the key', { %{ msg(3, 'string', 'k', 'v') }, id => '1733000000123-0123456789abcdef' },
        '{"db":3,"type":"string","key":"k","id":"1733000000123-0123456789abcdef","value":"v"}' ],
    [ 'undef id: none', { %{ msg(3, 'string', 'k', 'v') }, id => undef }, '{"db":3,"type":"string","key":"k","value":"v"}' ],
);

for my $case (@json_cases) {
    my ($name, $msg, $want) = @$case;
    my $line = to_json_line($msg);
    is($line, "$want\n", "json: $name");
    ok(eval { JSON::PP->new->utf8->decode($line); 1 }, "json: $name: valid JSON") or diag($@);
}

my @text_cases = (
    [ 'string', msg(0, 'string', 'k', "a\"b\\\n\x00\xff"), qq(db=0 type=string key="k" value="a\\"b\\\\\\n\\x00\\xff"\n) ],
    [ 'long string cut short', msg(1, 'string', 'k', 'x' x 300), 'db=1 type=string key="k" value="' . ('x' x 256) . qq("...(+44 bytes)\n) ],
    [ 'hash', msg(2, 'hash', 'h', 'f1', 'v1', 'f2', ''), qq(db=2 type=hash key="h" value=2 {"f1"="v1" "f2"=""}\n) ],
    [ 'hash-fields', msg(1, 'hash-fields', 'mail:42', 'rcpt:2', 'deferred', "\xff", ''),
        qq(db=1 type=hash-fields key="mail:42" value=2 {"rcpt:2"="deferred" "\\xff"=""}\n) ],
    [ 'large set cut short', msg(0, 'set', 's', 1 .. 20), 'db=0 type=set key="s" value=20 {' . join(' ', map {qq("$_")} 1 .. 16) . qq( ...(+4)}\n) ],
    [ 'zset', msg(0, 'zset', 'z', 'a', 'inf'), qq(db=0 type=zset key="z" value=1 {"a"="inf"}\n) ],
    [ 'stream', msg(3, 'stream', 's', [ '1700000000000-0', [ 'f', "v\n" ] ], [ '1700000000000-2', [ 'f', "\xff", 'f', '' ] ]),
        qq(db=3 type=stream key="s" value=2 {"1700000000000-0"={"f"="v\\n"} "1700000000000-2"={"f"="\\xff" "f"=""}}\n) ],
    [ 'empty stream', msg(0, 'stream', 's'), qq(db=0 type=stream key="s" value=0 {}\n) ],
    [ 'message id', { %{ msg(0, 'string', 'lock:q1', '1') }, id => '1764633600123-c16520f3790e34f7' },
        qq(db=0 type=string key="lock:q1" id=1764633600123-c16520f3790e34f7 value="1"\n) ],
    [ 'long stream and long entry', msg(0, 'stream', 's', [ '1-0', [ map { (chr(ord('a') + $_), '1') } 0 .. 16 ] ], map { [ "1-$_", [ 'f', 'v' ] ] } 1 .. 17),
        'db=0 type=stream key="s" value=18 {"1-0"={' . join(' ', map { '"' . chr(ord('a') + $_) . '"="1"' } 0 .. 15) . ' ...(+1)} '
        . join(' ', map { qq("1-$_"={"f"="v"}) } 1 .. 15) . qq( ...(+2)}\n) ],
);
for my $case (@text_cases) {
    my ($name, $msg, $want) = @$case;
    is(to_text_line($msg), $want, "text: $name");
}

# is_utf8_bytes follows Go's utf8.Valid.
for my $case (
    [ '', 1 ], [ 'ascii', 1 ], [ "\xc3\xa9", 1 ], [ "\xf4\x8f\xbf\xbf", 1 ], [ "\xef\xbf\xbf", 1 ],
    [ "\xc0\x80", 0 ], [ "\xe0\x80\x80", 0 ], [ "\xed\xbf\xbf", 0 ], [ "\xf4\x90\x80\x80", 0 ],
    [ "\xf5\x80\x80\x80", 0 ], [ "\xfe", 0 ], [ "\x80", 0 ], [ "a\xc3", 0 ],
) {
    is(is_utf8_bytes($case->[0]), $case->[1], 'is_utf8_bytes ' . unpack('H*', $case->[0]));
}

done_testing;
