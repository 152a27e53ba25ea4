package ZRedisTest::RESP;

# A minimal RESP2 client for the end-to-end tests: commands go out as
# arrays of bulk strings (binary safe), replies come back as Perl values
# (an error reply as { error => '...' }).

use strict;
use warnings;

use Carp qw(croak);
use IO::Socket::INET;

# free_port asks the kernel for a loopback port nobody listens on.
sub free_port {
    my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
        or die "free port: $!";
    my $port = $sock->sockport;
    close $sock;
    return $port;
}

sub connect {
    my ($class, $port) = @_;
    my $sock = IO::Socket::INET->new(
        PeerAddr => '127.0.0.1',
        PeerPort => $port,
        Proto    => 'tcp',
        Timeout  => 5,
    ) or return undef;
    binmode $sock;
    $sock->autoflush(1);
    return bless { sock => $sock }, $class;
}

sub command {
    my ($self, @args) = @_;
    my $request = '*' . scalar(@args) . "\r\n" . join('', map { '$' . length($_) . "\r\n$_\r\n" } @args);
    my $sock = $self->{sock};
    print {$sock} $request or croak "send: $!";
    return $self->_reply;
}

sub _reply {
    my ($self) = @_;
    my $sock = $self->{sock};
    my $line = readline $sock;
    croak 'connection closed' if !defined $line;
    $line =~ s/\r\n\z// or croak "reply line without CRLF: $line";
    my ($kind, $rest) = (substr($line, 0, 1), substr($line, 1));
    return $rest                if $kind eq '+';
    return { error => $rest }   if $kind eq '-';
    return 0 + $rest            if $kind eq ':';
    if ($kind eq '$') {
        return undef if $rest < 0;
        my $bulk = '';
        while (length $bulk < $rest + 2) {
            my $n = read $sock, $bulk, $rest + 2 - length $bulk, length $bulk;
            croak "read: $!" if !$n;
        }
        return substr $bulk, 0, $rest;
    }
    if ($kind eq '*') {
        return undef if $rest < 0;
        return [ map { $self->_reply } 1 .. $rest ];
    }
    croak "unexpected reply: $line";
}

sub close { close $_[0]{sock} }

1;
