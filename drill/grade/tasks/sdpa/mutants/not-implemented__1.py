def scaled_dot_product_attention(q, k, v, mask=None):
    # TODO: write it on the whiteboard first
    raise NotImplementedError
