"""Small example models for `irc-opt --model irc.tools.examples.<module>:<factory>`."""
