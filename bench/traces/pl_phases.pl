#!/usr/bin/perl
# Perl building and dropping hashes of arrays of strings in phases, for bench/traces.
#
# Debian's perl uses the system malloc (usemymalloc=n), so every SV, array body and string
# buffer the script makes is a malloc the recorder sees. Each phase builds a hash of arrays of
# strings of a different size mix, grows some strings in place (realloc), then deletes most
# keys while a scattered set of arrays stays alive to the end; the next phase must fit its
# objects around them, which is what fragments a heap.
#
# Deterministic (fixed srand seed and its own LCG); prints one line
# `pl_phases k=v ... checksum=N` at the end.
#     /usr/bin/perl bench/traces/pl_phases.pl [ROUNDS]
use strict;
use warnings;

my $rounds = @ARGV ? int($ARGV[0]) : 2;
my $seed = 20261128;
sub rnd { my ($n) = @_; $seed = ($seed * 1103515245 + 12345) % 2147483648; return $seed % $n; }

my @survivors;
my $checksum = 0;

# A hash of $keys arrays, each of 1..$maxlen strings of $min..$min+$span bytes.
sub build {
    my ($keys, $maxlen, $min, $span) = @_;
    my %h;
    for my $i (0 .. $keys - 1) {
        my @a = map { chr(97 + rnd(26)) x ($min + rnd($span)) } 1 .. 1 + rnd($maxlen);
        $h{"k$i-" . rnd(1000)} = \@a;
    }
    return \%h;
}

# Grow one string in a third of the arrays, shrink the array of another third.
sub churn {
    my ($h) = @_;
    my $n = 0;
    for my $k (sort keys %$h) {
        my $a = $h->{$k};
        my $r = rnd(3);
        if ($r == 0) { $a->[0] .= "g" x (16 + rnd(300)) for 1 .. 4; }
        elsif ($r == 1) { splice(@$a, 1 + int(@$a / 2)) if @$a > 1; }
        $n += length($a->[0]);
    }
    return $n;
}

# Delete every key but one in $every, keeping those arrays alive to the end.
sub drop_most {
    my ($h, $every) = @_;
    my $i = 0;
    for my $k (sort keys %$h) {
        push @survivors, $h->{$k} if $i++ % $every == 0;
        delete $h->{$k};
    }
}

for my $round (1 .. $rounds) {
    my @shapes = ([20000, 8, 4, 40], [7500, 30, 20, 200], [2000, 6, 500, 3000],
                  [30000, 3, 1, 16]);
    for my $s (@shapes) {
        my $h = build(@$s);
        $checksum = ($checksum + churn($h)) % 4294967296;
        drop_most($h, 50 + rnd(50));
    }
    # Let a third of the survivors go between rounds: new holes for the next round.
    @survivors = grep { rnd(3) } @survivors;
    $checksum = ($checksum + scalar(@survivors) * $round) % 4294967296;
}
my $live = 0;
$live += length($_->[0]) for @survivors;
print "pl_phases rounds=$rounds survivors=", scalar(@survivors),
      " live_bytes=$live checksum=$checksum\n";
