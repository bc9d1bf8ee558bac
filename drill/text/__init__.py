"""Text for the screen: interface labels and languages, math rendering, did-you-mean."""
