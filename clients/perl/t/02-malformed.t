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
my $key           = pack 'L/a*', 'k';
my $lp            = sub { pack 'L/a*', $_[0] };

my @cases = (
    [ 'not an array reference',  'frames',                                     qr/not an array reference/ ],
    [ 'no frames',               [],                                           qr/expected 3 frames, got 0/ ],
    [ 'two frames',              [ $header_string, $key ],                     qr/expected 3 frames, got 2/ ],
    [ 'four frames',             [ $header_string, $key, $lp->('v'), 'x' ],    qr/expected 3 frames, got 4/ ],
    [ 'header of 3 bytes',       [ "\0\0\0", $key, $lp->('v') ],               qr/header frame is 3 bytes/ ],
    [ 'header of 5 bytes',       [ "\0\0\0\0\0", $key, $lp->('v') ],           qr/header frame is 5 bytes/ ],
    [ 'unknown type',            [ pack('S S', 0, 5), $key, $lp->('v') ],      qr/unknown value type 5/ ],
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
    [ 'zset odd count',          [ $header_zset, $key, pack('L', 3) . $lp->('m') . $lp->('1') . $lp->('n') ], qr/zset count 3 is odd/ ],
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
is_deeply(decode([ pack('S S', 0, 2), $key, pack('L', 0) ])->{value}, [], 'an empty list decodes');
is_deeply(decode([ $header_zset, $key, pack('L', 0) ])->{value}, [], 'an empty zset decodes');

done_testing;
