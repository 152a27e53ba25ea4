# decode() refuses malformed messages with a reason and never trusts a
# claimed length: each case below must die with a message matching its
# pattern, quickly and without allocating what a length claims.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use Test::More;
use ZRedis::ExpiryListener qw(decode);

my $header_string = pack 'S S', 0, 0;
my $header_hash   = pack 'S S', 0, 1;
my $header_zset   = pack 'S S', 0, 4;
my $header_stream = pack 'S S', 0, 5;
my $header_hash_fields = pack 'S S', 0, 6;
my $key           = pack 'L/a*', 'k';
my $lp            = sub { pack 'L/a*', $_[0] };
# The message id of frames 1 and 2 for an event at Unix ms $at.
my $id_of         = sub { my ($at, $header, $key_frame) = @_; "$at-" . ZRedis::ExpiryListener::_fnv1a64_hex($header . $key_frame) };

my @cases = (
    [ 'not an array reference',  'frames',                                     qr/not an array reference/ ],
    [ 'no frames',               [],                                           qr/expected 3 or 4 frames, got 0/ ],
    [ 'two frames',              [ $header_string, $key ],                     qr/expected 3 or 4 frames, got 2/ ],
    [ 'five frames',             [ $header_string, $key, $lp->('v'), 'x', 'y' ], qr/expected 3 or 4 frames, got 5/ ],
    # Frame 4, the message id: the cases of zmqpub/decode_test.go.
    [ 'id not an id',            [ $header_string, $key, $lp->('v'), $lp->('v') ], qr/message id "\\x01\\x00\\x00\\x00v": time is not decimal/ ],
    [ 'id without hash',         [ $header_string, $key, $lp->('v'), '1733000000000' ], qr/want <ms>-<16 hex digits>/ ],
    [ 'id without time',         [ $header_string, $key, $lp->('v'), '-' . ZRedis::ExpiryListener::_fnv1a64_hex($header_string . $key) ], qr/want <ms>-<16 hex digits>/ ],
    [ 'empty id',                [ $header_string, $key, $lp->('v'), '' ],     qr/want <ms>-<16 hex digits>/ ],
    [ 'id of other frames',      [ $header_string, $key, $lp->('v'), $id_of->(5, pack('S S', 1, 0), $key) ], qr/does not match its frames/ ],
    [ 'id with leading zero',    [ $header_string, $key, $lp->('v'), '0' . $id_of->(5, $header_string, $key) ], qr/does not match its frames \(want "5-/ ],
    [ 'id in upper case',        [ $header_string, $key, $lp->('v'), uc $id_of->(5, $header_string, $key) ], qr/does not match its frames/ ],
    [ 'id too long',             [ $header_string, $key, $lp->('v'), '1' x 40 ], qr/message id of 40 bytes, at most 36/ ],
    [ 'id time past int64',      [ $header_string, $key, $lp->('v'), '9223372036854775808-' . ZRedis::ExpiryListener::_fnv1a64_hex($header_string . $key) ], qr/time out of range/ ],
    [ 'header of 3 bytes',       [ "\0\0\0", $key, $lp->('v') ],               qr/header frame is 3 bytes/ ],
    [ 'header of 5 bytes',       [ "\0\0\0\0\0", $key, $lp->('v') ],           qr/header frame is 5 bytes/ ],
    [ 'unknown type',            [ pack('S S', 0, 7), $key, $lp->('v') ],      qr/unknown value type 7/ ],
    [ 'empty key frame',         [ $header_string, '', $lp->('v') ],           qr/key frame ends inside the length/ ],
    [ 'key length past frame',   [ $header_string, pack('L', 10) . 'abc', $lp->('v') ], qr/key item 1 of 1 claims 10 bytes, the frame holds 3/ ],
    [ 'key length 4 GiB',        [ $header_string, pack('L', 0xFFFFFFFF), $lp->('v') ], qr/claims 4294967295 bytes/ ],
    [ 'key trailing bytes',      [ $header_string, $key . 'zz', $lp->('v') ],  qr/key frame has 2 trailing bytes/ ],
    [ 'string frame empty',      [ $header_string, $key, '' ],                 qr/value frame ends inside the length/ ],
    [ 'string length past frame', [ $header_string, $key, pack('L', 5) . 'ab' ], qr/value item 1 of 1 claims 5 bytes/ ],
    [ 'string trailing bytes',   [ $header_string, $key, $lp->('v') . 'x' ],   qr/value frame has 1 trailing bytes/ ],
    [ 'hash frame without count', [ $header_hash, $key, 'ab' ],                qr/too short for its count/ ],
    [ 'hash odd count',          [ $header_hash, $key, pack('L', 1) . $lp->('f') ], qr/hash count 1 is odd/ ],
    [ 'hash count past items',   [ $header_hash, $key, pack('L', 4) . $lp->('f') . $lp->('v') ], qr/ends inside the length of item 3 of 4/ ],
    [ 'hash count 4 G',          [ $header_hash, $key, pack('L', 0xFFFFFFFE) ], qr/item 1 of 4294967294/ ],
    [ 'hash item past frame',    [ $header_hash, $key, pack('L', 2) . $lp->('f') . pack('L', 9) . 'v' ], qr/item 2 of 2 claims 9 bytes, the frame holds 1/ ],
    [ 'hash trailing bytes',     [ $header_hash, $key, pack('L', 2) . $lp->('f') . $lp->('v') . "\0" ], qr/value frame has 1 trailing bytes/ ],
    [ 'hash-fields odd count',   [ $header_hash_fields, $key, pack('L', 3) . $lp->('f') . $lp->('v') . $lp->('g') ], qr/hash-fields count 3 is odd/ ],
    [ 'hash-fields frame without count', [ $header_hash_fields, $key, 'ab' ], qr/value frame is 2 bytes, too short for its count/ ],
    [ 'hash-fields item past frame', [ $header_hash_fields, $key, pack('L', 2) . $lp->('f') . pack('L', 9) . 'v' ], qr/item 2 of 2 claims 9 bytes, the frame holds 1/ ],
    [ 'hash-fields trailing bytes', [ $header_hash_fields, $key, pack('L', 2) . $lp->('f') . $lp->('v') . "\0" ], qr/value frame has 1 trailing bytes/ ],
    [ 'zset odd count',          [ $header_zset, $key, pack('L', 3) . $lp->('m') . $lp->('1') . $lp->('n') ], qr/zset count 3 is odd/ ],
    [ 'stream frame without count', [ $header_stream, $key, 'ab' ],             qr/stream value frame is 2 bytes, too short for its count/ ],
    [ 'stream count 4 G',        [ $header_stream, $key, pack('L', 0xFFFFFFFF) . $lp->('1-0') . pack('L', 0) ], qr/claims 4294967295 entries, the frame holds 11 bytes/ ],
    [ 'stream ID past frame',    [ $header_stream, $key, pack('L', 1) . pack('L', 9) . '1-0' . "\0" ], qr/the ID of stream entry 1 of 1 claims 9 bytes, the frame holds 4/ ],
    [ 'stream entry without item count', [ $header_stream, $key, pack('L', 1) . $lp->('10-10') ], qr/ends inside the item count of entry 1 of 1/ ],
    [ 'stream entry odd count',  [ $header_stream, $key, pack('L', 1) . $lp->('1-0') . pack('L', 1) . $lp->('f') ], qr/stream entry 1 of 1 has odd item count 1/ ],
    [ 'stream entry count 4 G',  [ $header_stream, $key, pack('L', 1) . $lp->('1-0') . pack('L', 0xFFFFFFFE) . $lp->('f') ], qr/stream entry 1 of 1 claims 4294967294 items, the frame holds 5 bytes/ ],
    [ 'stream item past frame',  [ $header_stream, $key, pack('L', 1) . $lp->('1-0') . pack('L', 2) . $lp->('f') . pack('L', 5) . 'v' ], qr/item 2 of 2 of stream entry 1 of 1 claims 5 bytes, the frame holds 1/ ],
    [ 'stream second entry truncated', [ $header_stream, $key, pack('L', 2) . $lp->('1-0') . pack('L', 0) . pack('L', 3) . '2-' ], qr/the ID of stream entry 2 of 2 claims 3 bytes, the frame holds 2/ ],
    [ 'stream trailing bytes',   [ $header_stream, $key, pack('L', 1) . $lp->('1-0') . pack('L', 0) . 'x' ], qr/stream value frame has 1 trailing bytes/ ],
);

for my $case (@cases) {
    my ($name, $frames, $reason) = @$case;
    my $msg = eval { decode($frames) };
    ok(!defined $msg, "$name: refused");
    like($@, $reason, "$name: reason");
    like($@, qr/\n\z/, "$name: reason is one line") ;
    unlike($@, qr/ at \S+ line \d+/, "$name: reason names no source line");
}

# The same frames, well formed, decode: the cases above fail for the stated
# reason only.
my $ok = decode([ $header_hash, $key, pack('L', 2) . $lp->('f') . $lp->('') ]);
is_deeply($ok->{value}, { f => '' }, 'a well-formed hash with an empty value decodes');
my $fields = decode([ $header_hash_fields, $key, pack('L', 4) . $lp->('rcpt:2') . $lp->('deferred') . $lp->('note') . $lp->('') ]);
is_deeply($fields->{value}, { 'rcpt:2' => 'deferred', note => '' }, 'a well-formed hash-fields decodes as a hash');
is_deeply($fields->{parts}, [ 'rcpt:2', 'deferred', 'note', '' ], 'hash-fields: parts in frame order');
is($fields->{type}, 'hash-fields', 'hash-fields: its name');
is($fields->{type_code}, 6, 'hash-fields: its code');
is_deeply(decode([ pack('S S', 0, 2), $key, pack('L', 0) ])->{value}, [], 'an empty list decodes');
is_deeply(decode([ $header_zset, $key, pack('L', 0) ])->{value}, [], 'an empty zset decodes');
is_deeply(decode([ $header_stream, $key, pack('L', 0) ])->{value}, [], 'an empty stream decodes');
is_deeply(decode([ $header_stream, $key, pack('L', 1) . $lp->('1-0') . pack('L', 2) . $lp->('f') . $lp->('') ])->{value},
    [ [ '1-0', [ 'f', '' ] ] ], 'a well-formed stream with an empty value decodes');
for my $at (0, 5, '9223372036854775807') {
    my $id = $id_of->($at, $header_string, $key);
    is(decode([ $header_string, $key, $lp->('v'), $id ])->{id}, $id, "a message id of time $at decodes");
}

done_testing;
